"""Looking at packages: htp.show(pkg) and the REPL / notebook views of Package and RunResult.

The report of a compiled and run example (examples/vector_add.py on pto-a2a3sim) is opened in headless
Chromium: the rendered DOM must hold the plan graph, the task timeline and the pass table, and a screenshot
must show the plan's and the timeline's fill colours painted. Without chromium those tests are skipped,
saying so. The rest checks report.py's functions on hand-made packages and traces (no browser)."""
import html.parser
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import htp
from htp import report

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/bootstrap.sh installs it), so the HTML report "
                             "was not checked in a browser")


# ------------------------------------------------------------------------------------ a run package

@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """(package, run result) of vector_add compiled with every pass dumped and run on the simulator."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        import vector_add
    finally:
        sys.path.remove(str(EXAMPLES))
    root = tmp_path_factory.mktemp("report")
    ctx = htp.Context(use_environment=False)
    pkg = ctx.compile(vector_add.vector_add, target="pto-a2a3sim", out=root / "pkg", dump_ir="all")
    result = htp.bind(pkg, ctx).run(cache_dir=root / "cache", **vector_add.make_inputs(np.random.default_rng(0)))
    return pkg, result


def test_show_writes_into_logs_and_the_package_still_verifies(ran):
    pkg, _ = ran
    out = htp.show(pkg)
    assert out == pkg.path / "logs" / "report.html"
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "pto-a2a3sim" in text
    host = os.environ.get("HTP_HOST_EXE")
    if not host:
        pytest.skip("HTP_HOST_EXE is not set (ctest sets it), so `htp-host verify` was not run")
    r = subprocess.run([host, "verify", str(pkg.path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_show_takes_a_path_and_an_out_file(ran, tmp_path):
    pkg, _ = ran
    out = htp.show(str(pkg.path), out=tmp_path / "r.html")
    assert out == tmp_path / "r.html" and "tile.fold" in out.read_text(encoding="utf-8")


def test_repl_summaries(ran):
    pkg, result = ran
    text = repr(pkg)
    assert text.startswith(f"<htp.Package {pkg.path}") and text.endswith(">")
    assert "target  pto-a2a3sim (backend pto.backend, binding pto.a2a3sim)" in text
    assert "vector_add(A: in f32[128, 64], B: in f32[128, 64], C: out f32[128, 64])" in text
    assert all(p in text for p in pkg.passes)
    assert "run     ok, path htp-cpu-sim, entry vector_add, 4 tasks" in text
    text = repr(result)
    assert "binding pto.a2a3sim" in text and "out     C: float32[128x64]" in text and "4 tasks" in text


def test_notebook_views(ran):
    pkg, result = ran
    view = pkg._repr_html_()
    assert all(p in view for p in pkg.passes)
    assert view.count('<g class="event">') == 5  # the orchestration and four add_tile tasks
    assert "estimated device time (model) track is not drawn here" in view  # modelled, on another clock
    view = result._repr_html_()
    assert "<code>C</code>" in view and "128x64" in view and "float32" in view
    assert view.count('<g class="event">') == 5


# ------------------------------------------------------------------------------------------- browser

class _Sections(html.parser.HTMLParser):
    """Counts, per <section id=...>, the tags (and tag.class pairs) inside it."""

    def __init__(self):
        super().__init__()
        self.stack, self.counts, self.fills = [], {}, set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.stack.append(attrs.get("id"))
        if self.stack:
            c = self.counts.setdefault(self.stack[-1], {})
            c[tag] = c.get(tag, 0) + 1
            for cls in (attrs.get("class") or "").split():
                c[f"{tag}.{cls}"] = c.get(f"{tag}.{cls}", 0) + 1
            if self.stack[-1] == "timeline" and tag == "rect" and attrs.get("fill") in report.TIMELINE_PALETTE:
                self.fills.add(attrs["fill"])

    def handle_endtag(self, tag):
        if tag == "section" and self.stack:
            self.stack.pop()


def _chromium(tmp_path, *args):
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={tmp_path / 'chromium-profile'}", *args],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def _png_colors(data: bytes) -> set:
    """The distinct RGB colours of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    width, height, depth, color_type, _, _, interlace = header
    assert depth == 8 and color_type in (2, 6) and interlace == 0, f"unexpected PNG format {header}"
    bpp = 3 if color_type == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), width * bpp
    prev, colors = bytearray(stride), set()
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride) if kind else ():
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colors.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return {tuple(c) for c in colors}


def _rgb(hex_color: str) -> tuple:
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


@needs_chromium
def test_report_renders_in_chromium(ran, tmp_path):
    pkg, _ = ran
    page = htp.show(pkg, out=tmp_path / "report.html").resolve().as_uri()

    dom = _Sections()
    dom.feed(_chromium(tmp_path, "--dump-dom", page))
    plan, timeline, passes = dom.counts["plan"], dom.counts["timeline"], dom.counts["passes"]
    assert plan.get("svg") == 1, "no plan graph (is Graphviz 'dot' installed? scripts/bootstrap.sh installs it)"
    assert plan.get("g.node") == len(pkg.passes)
    assert plan.get("g.edge", 0) >= len(pkg.passes) - 1
    with open(pkg.path / "logs" / "run" / "trace.json", encoding="utf-8") as f:
        complete = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    measured = [e for e in complete if e.get("cat") != "estimate"]  # the rest: the estimated device time's track
    assert timeline.get("svg") == 1 and timeline.get("g.event") == len(measured) == 5  # the estimate is not drawn
    assert len(complete) > len(measured)
    assert passes.get("tr") == len(pkg.passes) + 1  # and the header row
    assert dom.counts["ir"].get("details") == len(pkg.passes)

    shot = tmp_path / "report.png"
    _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,2000", page)
    colors = _png_colors(shot.read_bytes())
    assert len(colors) > 50, "the screenshot is (nearly) uniform: nothing was drawn"
    assert _rgb(report.PLAN_NODE_FILL) in colors, "the plan's pass boxes were not painted"
    assert dom.fills and all(_rgb(c) in colors for c in dom.fills), "the timeline's task bars were not painted"


@needs_chromium
def test_hostile_names_stay_text_in_chromium(tmp_path):
    pkg = _fake_package(tmp_path)
    page = report.show(pkg).resolve().as_uri()
    dom = _chromium(tmp_path, "--dump-dom", page)
    assert "<img" not in dom and "<script" not in dom
    assert "&lt;img src=x onerror=alert(1)&gt;" in dom


# ------------------------------------------------------------------------------ report.py, no browser

HOSTILE = "<img src=x onerror=alert(1)>"


def _fake_package(tmp_path) -> pathlib.Path:
    """A package directory whose every name is markup (target, pass, plugin, file, thread and task), with a
    lone surrogate in the manifest and a file name that is not UTF-8."""
    pkg = tmp_path / "pkg"
    (pkg / "ir").mkdir(parents=True)
    (pkg / "logs" / "run").mkdir(parents=True)
    passes = [{"id": "a<b>", "stage": "canonicalize", "plugin": HOSTILE, "added": ["F<1>"]},
              {"id": "<script>alert(1)</script>", "stage": "emit", "plugin": "p",
               "after": [{"id": "a<b>", "reason": "needs F<1>, which a<b> provides"}]}]
    manifest = {"target": HOSTILE, "htp_version": "\ud800", "plan": {"backend": "b\"q", "passes": passes},
                "entrypoints": [{"name": HOSTILE, "params": [{"name": "<x>", "dtype": "f32", "shape": [4]}]}],
                "files": [{"path": f"ir/{HOSTILE}", "role": "<r>", "writer": "<w>", "size": 3}]}
    (pkg / "manifest.json").write_text(json.dumps(manifest))
    (pkg / "ir" / HOSTILE).write_text("abc")
    with open(os.path.join(os.fsencode(pkg / "ir"), b"\xff.txt"), "w"):
        pass
    (pkg / "ir" / "00_source.py").write_text("x = '<script>'\n")
    (pkg / "ir" / "01_a<b>.py").write_text("x = '</pre><script>alert(1)</script>'\n")
    (pkg / "logs" / "run" / "report.json").write_text(json.dumps({"ok": True, "path": HOSTILE, "trace": "t.json"}))
    (pkg / "logs" / "run" / "t.json").write_text(json.dumps({"traceEvents": [
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": HOSTILE}},
        {"ph": "X", "name": HOSTILE, "pid": 0, "tid": 1, "ts": 0, "dur": 5, "args": {"k": "<v>"}}]}))
    return pkg


def test_hostile_names_are_escaped(tmp_path):
    pkg = _fake_package(tmp_path)
    for text in (report.report_html(pkg), report.package_html(pkg)):
        assert "<img" not in text and "<script" not in text
        assert "&lt;img src=x onerror=alert(1)&gt;" in text
    page = report.report_html(pkg)
    page.encode("utf-8")  # the lone surrogates became "?"; report.show writes this
    report.package_text(pkg).encode("utf-8")
    assert "a&lt;b&gt;" in page and "F&lt;1&gt;" in page  # pass id and fact, in the table and the graph
    assert "&lt;/pre&gt;&lt;script&gt;" in page            # the IR dump's text


def test_plan_without_graphviz_is_text(tmp_path, monkeypatch):
    monkeypatch.setattr(report.shutil, "which", lambda name: None)
    page = report.report_html(_fake_package(tmp_path))
    assert "Graphviz &#x27;dot&#x27; is not installed" in page and "1. a&lt;b&gt; [canonicalize]" in page


def test_plan_dot_orders_passes_by_their_facts():
    manifest = {"target": "t", "plan": {"passes": [
        {"id": "p.a", "stage": "canonicalize", "plugin": "x", "added": ["IR.A"]},
        {"id": "p.b", "stage": "lower", "plugin": "x", "added": ["IR.B"]},
        {"id": "p.c", "stage": "emit", "plugin": "x", "after": [
            {"id": "p.a", "reason": "p.c requires IR.A, which p.a provides"},
            {"id": "p.b", "reason": "p.c requires ?IR.B, which p.b provides"}]}]}}
    dot = report.plan_dot(manifest, [{"pass": "p.a", "index": 1, "duration_us": 1500}])
    assert 'p0 -> p2 [label="IR.A"' in dot and 'p1 -> p2 [label="IR.B"' in dot and "p0 -> p1" not in dot
    assert "1.50 ms" in dot
    svg, why = report.render_dot(dot)
    if svg is None:
        pytest.skip(why)
    assert svg.startswith("<svg") and svg.count('class="node"') == 3


def test_timeline_from_a_synthetic_trace():
    trace = {"traceEvents": [
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "core0"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 2, "args": {"name": "idle core"}},
        {"ph": "X", "name": "k1", "pid": 0, "tid": 1, "ts": 100, "dur": 50},
        {"ph": "X", "name": "k2", "pid": 0, "tid": 1, "ts": 200, "dur": 100, "args": {"task": 7}},
        {"ph": "X", "name": "k3", "pid": 0, "tid": 3, "ts": 150, "dur": 10},      # an unnamed thread
        {"ph": "B", "name": "begin", "pid": 0, "tid": 1, "ts": 0},                 # not drawn
        {"ph": "X", "name": "bad", "pid": 0, "tid": 1, "ts": float("nan"), "dur": 1},
        {"ph": "X", "name": "bad", "pid": 0, "tid": 1, "ts": "1", "dur": 1},
        {"ph": "X", "name": "bad", "pid": 0, "tid": 1, "ts": 1, "dur": -1}]}
    svg = report.timeline_svg(trace, width=600)
    assert svg.count('<g class="event">') == 3 and "bad" not in svg and "begin" not in svg
    assert ">core0<" in svg and ">idle core<" in svg and ">pid 0 tid 3<" in svg
    assert "&quot;task&quot;: 7" in svg  # the arguments, in the tooltip
    xs = [float(s.split('"')[0]) for s in svg.split('<g class="event"><rect x="')[1:]]
    assert xs[0] == 150 and xs[0] < xs[2] < xs[1] and xs[1] + 100 / 200 * (600 - 150 - 12) == pytest.approx(600 - 12)
    assert report.timeline_svg(trace["traceEvents"], width=600) == svg  # the JSON Array Format
    assert "too far" in report.timeline_svg([{"ph": "X", "ts": -1e308, "dur": 1}, {"ph": "X", "ts": 1e308, "dur": 1}])
    assert "no complete" in report.timeline_svg({"traceEvents": []})
    assert "no event list" in report.timeline_svg({"traceEvents": 3})


def test_damaged_packages_are_notes_not_hangs(tmp_path):
    fifo = tmp_path / "fifo"
    (fifo / "logs").mkdir(parents=True)
    os.mkfifo(fifo / "manifest.json")  # a plain open() of it would block forever
    assert "not a regular file" in report.package_text(fifo)
    with pytest.raises(FileNotFoundError, match="not an HTP package"):
        report.show(fifo)

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json")
    assert "cannot read manifest.json" in report.package_text(broken)
    assert "cannot read manifest.json" in report.report_html(broken)


def test_show_refuses_a_symlinked_logs(tmp_path):
    pkg = _fake_package(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(pkg / "logs")
    (pkg / "logs").symlink_to(elsewhere)
    with pytest.raises(OSError, match="refusing to write the report through it"):
        report.show(pkg)
    assert not list(elsewhere.iterdir())
    assert report.show(pkg, out=tmp_path / "r.html").is_file()
