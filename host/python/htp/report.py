"""Looking at packages and run results: the REPL summaries (``repr``), the notebook views (``_repr_html_``)
and ``htp.show(pkg)``, a self-contained HTML report of a package (plan graph, passes with timings, per-pass
IR diffs, files, run report and task timeline).

Everything here reads the package directory only. A package may come from elsewhere, so its files are
read the way the host reads them (regular files only, never through a symlink, bounded sizes: a FIFO
named ``manifest.json`` must not hang a notebook), and every string taken from it is escaped before it
reaches HTML. Nothing here raises on a damaged package: what cannot be read is shown as a note."""
from __future__ import annotations

import difflib
import html
import json
import math
import os
import pathlib
import re
import shutil
import stat
import subprocess
import tempfile
import textwrap
import zlib

__all__ = ["show", "report_html", "package_text", "package_html", "run_text", "run_html", "plan_dot",
           "render_dot", "timeline_svg"]

_JSON_LIMIT = 64 << 20  # the host's limit for documents (io/safe_read)
_TEXT_LIMIT = 4 << 20   # an IR dump larger than this is named, not diffed
_DIFF_LINES = 2000      # lines of one diff shown; the rest is summarised
_MAX_EVENTS = 5000      # timeline rectangles drawn; an SVG of more is slow to open and unreadable anyway
_MAX_FILES = 5000       # files listed
_DOT_TIMEOUT_S = 30

# The fill of plan nodes and the palette of timeline events are used nowhere else on the page, so a
# screenshot shows whether the plan and the timeline were painted (tests/python/test_report_html.py).
PLAN_NODE_FILL = "#cfe0fa"
TIMELINE_PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                    "#9c755f", "#8cd17d")


# ---------------------------------------------------------------------------------------------- reading

def _read_bytes(path: pathlib.Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; OSError (naming why) otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        if st.st_size > limit:
            raise OSError(f"{path} has {st.st_size} bytes, more than the {limit} this report reads")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise OSError(f"{path} grew beyond {limit} bytes while being read")
        return data
    finally:
        os.close(fd)


def _read_text(path: pathlib.Path, limit: int = _TEXT_LIMIT) -> str:
    return _read_bytes(path, limit).decode("utf-8", errors="replace")


def _read_json(path: pathlib.Path):
    """(value, None), (None, None) when the file does not exist, or (None, why it cannot be read)."""
    if not os.path.lexists(path):
        return None, None
    try:
        return json.loads(_read_bytes(path, _JSON_LIMIT)), None
    except (OSError, ValueError, RecursionError) as e:
        return None, f"cannot read {path.name}: {e}"


def _read_jsonl(path: pathlib.Path):
    """The JSON objects of a JSON-lines file, skipping lines that are not objects."""
    if not os.path.lexists(path):
        return [], None
    try:
        text = _read_bytes(path, _JSON_LIMIT).decode("utf-8", errors="replace")
    except OSError as e:
        return [], f"cannot read {path.name}: {e}"
    out, bad = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            out.append(value)
        else:
            bad += 1
    return out, (f"{path.name}: {bad} line(s) are not JSON objects" if bad else None)


def _plain_name(value, default: str) -> str:
    """A file name taken from a report, accepted only when it names a file in the same directory."""
    if isinstance(value, str) and value and "/" not in value and "\\" not in value and value not in (".", ".."):
        return value
    return default


class _View:
    """What a report shows of one package, read once: manifest, pass trace, last run (report and trace)."""

    def __init__(self, pkg_or_path):
        self.path = pathlib.Path(getattr(pkg_or_path, "path", pkg_or_path))
        self.notes: list[str] = []
        manifest, note = _read_json(self.path / "manifest.json")
        if note or manifest is None:
            self.notes.append(note or "manifest.json is missing")
        self.manifest = manifest if isinstance(manifest, dict) else {}
        plan = self.manifest.get("plan")
        self.plan = plan if isinstance(plan, dict) else {}
        self.trace, note = _read_jsonl(self.path / "ir" / "pass_trace.jsonl")
        self._note(note)
        run_dir = self.path / "logs" / "run"
        report, note = _read_json(run_dir / "report.json")
        self._note(note)
        self.run_report = report if isinstance(report, dict) else None
        self.run_trace = None
        if self.run_report is not None:
            self.run_trace, note = _read_json(run_dir / _plain_name(self.run_report.get("trace"), "trace.json"))
            self._note(note)

    def _note(self, note):
        if note:
            self.notes.append(note)

    @property
    def target(self) -> str:
        return str(self.manifest.get("target", "?"))

    @property
    def entrypoints(self) -> list[dict]:
        eps = self.manifest.get("entrypoints")
        return [e for e in eps if isinstance(e, dict)] if isinstance(eps, list) else []

    def passes(self) -> list[dict]:
        return _merged_passes(self.plan, self.trace)


def _merged_passes(plan: dict, trace: list[dict]) -> list[dict]:
    """One dict per pass in run order: the plan's entry (``after``, ``added``) merged with the trace's
    (``index``, timings, ``requires``, ``provides``, ``nodes_changed``)."""
    planned = [p for p in plan.get("passes") or [] if isinstance(p, dict)]
    traced = {str(t.get("pass")): t for t in trace}
    if not planned:  # a damaged manifest without a plan: the trace alone
        return [{**t, "id": str(t.get("pass"))} for t in trace]
    out = []
    for i, p in enumerate(planned, 1):
        t = traced.get(str(p.get("id")), {})
        out.append({"index": i, **p, **t, "id": str(p.get("id"))})
    return out


# -------------------------------------------------------------------------------------------- formatting

def _clean(value) -> str:
    """``str(value)`` without lone surrogates (from JSON ``\\ud800`` escapes or file names that are not
    UTF-8), which cannot be written as UTF-8."""
    return str(value).encode("utf-8", errors="replace").decode("utf-8")


def _e(value) -> str:
    return html.escape(_clean(value), quote=True)


def _number(value):
    """A finite float, or None: trace and report numbers are untrusted (strings, NaN, booleans)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _duration(us, micro: str = "µs") -> str:
    us = _number(us)
    if us is None:
        return "?"
    if abs(us) < 1000:
        return f"{us:.0f} {micro}" if us == int(us) or abs(us) >= 10 else f"{us:.1f} {micro}"
    if abs(us) < 1e6:
        return f"{us / 1e3:.2f} ms"
    return f"{us / 1e6:.2f} s"


def _size(n) -> str:
    n = _number(n)
    if n is None:
        return "?"
    if n < 1024:
        return f"{n:.0f} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            break
    return f"{n:.1f} {unit}"


def _param(p: dict) -> str:
    shape = p.get("shape")
    dims = f"[{', '.join(str(d) for d in shape)}]" if isinstance(shape, list) else ""
    kind = f"{p.get('dtype', '?')}{dims}"
    return f"{p.get('name', '?')}: {p['dir']} {kind}" if p.get("dir") else f"{p.get('name', '?')}: {kind}"


def _signature(entry: dict) -> str:
    params = entry.get("params") if isinstance(entry.get("params"), list) else []
    return f"{entry.get('name', '?')}({', '.join(_param(p) for p in params if isinstance(p, dict))})"


def _run_summary(report: dict, micro: str = "µs") -> str:
    """One line: outcome, execution path, tasks and times of an htp.run.v1 report."""
    parts = ["ok" if report.get("ok", True) is True else "FAILED"]
    for key in ("path", "entry"):
        if isinstance(report.get(key), str):
            parts.append(f"{key} {report[key]}")
    if _number(report.get("tasks")) is not None:
        parts.append(f"{report['tasks']} tasks")
    for key, label in (("run_seconds", "run"), ("wall_seconds", "wall")):
        s = _number(report.get(key))
        if s is not None:
            parts.append(f"{label} {_duration(s * 1e6, micro)}")
    build = report.get("build")
    if isinstance(build, dict) and isinstance(build.get("cache"), str):
        parts.append(f"build cache {build['cache']}")
    return ", ".join(parts)


# ------------------------------------------------------------------------------------------- plan graph

def _dot_string(s: str) -> str:
    return '"' + _clean(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def plan_dot(manifest: dict, pass_trace: list[dict] | None = None) -> str:
    """Graphviz DOT of a package's plan: one box per pass (run order, stage, plugin, measured time) and an
    edge from each pass to those that must run after it, labelled with the fact that orders them (the
    plan's ``after``). Built from the manifest, so it needs neither the plugins nor ``htp-host``."""
    plan = manifest.get("plan") if isinstance(manifest.get("plan"), dict) else {}
    passes = _merged_passes(plan, list(pass_trace or []))
    chosen = ", ".join(f"{k} {plan[k]}" for k in ("backend", "binding", "pipeline") if isinstance(plan.get(k), str))
    title = f"plan for {manifest.get('target', '?')}" + (f" ({chosen})" if chosen else "")
    lines = ["digraph htp_plan {",
             f"  graph [rankdir=LR, labelloc=t, fontname=Helvetica, fontsize=12, label={_dot_string(title)}];",
             f'  node [shape=box, style="rounded,filled", fillcolor="{PLAN_NODE_FILL}", fontname=Helvetica, '
             'fontsize=10];',
             "  edge [fontname=Helvetica, fontsize=8, color=\"#555555\"];"]
    node, by_id = {}, {}
    for i, p in enumerate(passes):
        node[p["id"]], by_id[p["id"]] = f"p{i}", p
        label = f"{p.get('index', i + 1)}. {p['id']} {p.get('version', '')}".rstrip()
        label += f"\n[{p.get('stage', '?')}] {p.get('plugin', '')}".rstrip()
        if _number(p.get("duration_us")) is not None:
            label += "\n" + _duration(p["duration_us"], "us")
        tooltip = "provides: " + (", ".join(map(str, p.get("added") or p.get("provides") or [])) or "-")
        lines.append(f"  p{i} [label={_dot_string(label)}, tooltip={_dot_string(tooltip)}];")
    edges = 0
    for i, p in enumerate(passes):
        for dep in p.get("after") or []:
            if not isinstance(dep, dict) or str(dep.get("id")) not in node:
                continue
            producer = by_id[str(dep.get("id"))]
            reason = str(dep.get("reason", ""))
            facts = [str(f) for f in producer.get("added") or [] if str(f) in reason]
            lines.append(f"  {node[producer['id']]} -> p{i} [label={_dot_string(', '.join(facts))}, "
                         f"tooltip={_dot_string(reason)}];")
            edges += 1
    if not edges:  # no recorded dependencies: show the run order
        lines += [f"  p{i} -> p{i + 1};" for i in range(len(passes) - 1)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_dot(dot_text: str):
    """(inline SVG, None) from Graphviz ``dot -Tsvg``, or (None, why not)."""
    exe = shutil.which("dot")
    if exe is None:
        return None, "Graphviz 'dot' is not installed (apt-get install graphviz), so the plan is shown as text"
    try:
        r = subprocess.run([exe, "-Tsvg"], input=dot_text.encode("utf-8"), capture_output=True,
                           timeout=_DOT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"Graphviz 'dot' failed ({e}), so the plan is shown as text"
    svg = r.stdout.decode("utf-8", errors="replace")
    start = svg.find("<svg")
    if r.returncode != 0 or start < 0:
        return None, (f"Graphviz 'dot' failed (exit {r.returncode}: "
                      f"{r.stderr.decode('utf-8', errors='replace').strip()[:300]}), so the plan is shown as text")
    return svg[start:], None  # without the XML prolog and DOCTYPE, which do not belong inside HTML


# -------------------------------------------------------------------------------------------- timeline

def _color(name: str) -> str:
    return TIMELINE_PALETTE[zlib.crc32(_clean(name).encode("utf-8")) % len(TIMELINE_PALETTE)]


def _nice_step(span: float, ticks: int = 6) -> float:
    raw = span / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


def timeline_svg(trace, *, width: int = 960, title: str = "") -> str:
    """An SVG of a Chrome/Perfetto trace (a dict with ``traceEvents`` or a bare event list): one row per
    thread (named by its ``thread_name`` metadata, idle threads included), one rectangle per complete
    event (``"ph": "X"``) with the event's name as label and its times and arguments as tooltip. Other
    event kinds are not drawn, nor the estimated-device-time track (``"cat": "estimate"``: modelled device
    time on another clock), which a note mentions. Returns a short note instead of an SVG when there is
    nothing to draw."""
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        return '<p class="htp-note">the trace holds no event list</p>'
    rows: dict = {}          # (pid, tid) -> label, in order of first appearance
    processes: dict = {}
    spans = []
    estimated = set()        # pids of the estimated-device-time track (drawn apart, see the note)
    for ev in events:
        if not isinstance(ev, dict):
            continue
        key = (str(ev.get("pid", "")), str(ev.get("tid", "")))
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        if ev.get("ph") == "M" and ev.get("name") == "thread_name":
            rows[key] = str(args.get("name", ""))
        elif ev.get("ph") == "M" and ev.get("name") == "process_name":
            processes[key[0]] = str(args.get("name", ""))
        elif ev.get("ph") == "X" and ev.get("cat") == "estimate":
            estimated.add(key[0])  # modelled device time: another clock than the measured events
        elif ev.get("ph") == "X":
            ts, dur = _number(ev.get("ts")), _number(ev.get("dur", 0))
            if ts is None or dur is None or dur < 0:
                continue
            rows.setdefault(key, "")
            spans.append((key, ts, dur, str(ev.get("name", "")), ev))
    rows = {k: v for k, v in rows.items() if k[0] not in estimated}
    note = ('<p class="htp-note">the trace\'s estimated device time (model) track is not drawn here: it is '
            'modelled device time, not the simulator\'s measured clock (see the run report\'s estimate)</p>'
            if estimated else "")
    if not spans:
        return '<p class="htp-note">the trace holds no complete ("X") events</p>' + note
    shown = spans[:_MAX_EVENTS]
    t0 = min(s[1] for s in shown)
    t1 = max(s[1] + s[2] for s in shown)
    span = max(t1 - t0, 1e-3)
    if not math.isfinite(span):  # finite times whose difference overflows
        return '<p class="htp-note">the trace\'s times span too far to draw</p>'
    several_processes = len({k[0] for k in rows}) > 1
    label_w, row_h, axis_h, right = 150, 22, 26, 12
    plot_w = max(width - label_w - right, 100)
    height = axis_h + row_h * len(rows) + 4
    row_y = {key: axis_h + i * row_h for i, key in enumerate(rows)}

    def x_of(t):
        return label_w + (t - t0) / span * plot_w

    out = [f'<svg class="htp-timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11" '
           f'role="img" aria-label="{_e(title or "task timeline")}">']
    if title:
        out.append(f"<title>{_e(title)}</title>")
    step = _nice_step(span)
    k = 0
    while k * step <= span * 1.0001:
        x = x_of(t0 + k * step)
        out.append(f'<line x1="{x:.1f}" y1="{axis_h - 6}" x2="{x:.1f}" y2="{height}" stroke="#e4e4e4"/>'
                   f'<text x="{x:.1f}" y="{axis_h - 10}" text-anchor="middle" fill="#555">'
                   f"{_e(_duration(k * step))}</text>")
        k += 1
    for i, (key, y) in enumerate(row_y.items()):
        name = rows[key] or f"pid {key[0]} tid {key[1]}"
        if several_processes and processes.get(key[0]):
            name = f"{processes[key[0]]} / {name}"
        if i % 2 == 0:  # banded rows
            out.append(f'<rect x="0" y="{y}" width="{width}" height="{row_h}" fill="#f4f4f4"/>')
        out.append(f'<text x="6" y="{y + row_h / 2 + 4:.1f}" fill="#222">{_e(name[:24])}<title>{_e(name)}</title>'
                   "</text>")
    for key, ts, dur, name, ev in shown:
        x, y = x_of(ts), row_y[key] + 3
        w = max(dur / span * plot_w, 1.0)
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        tip = f"{name}\nstart +{_duration(ts - t0)}, duration {_duration(dur)}"
        if ev.get("cat"):
            tip += f"\ncategory {ev.get('cat')}"
        if args:
            tip += "\n" + json.dumps(args, sort_keys=True, default=str)[:500]
        out.append(f'<g class="event"><rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{row_h - 6}" rx="2" '
                   f'fill="{_color(name)}"><title>{_e(tip)}</title></rect>')
        fits = int((w - 6) / 6.5)
        if fits >= 3:
            text = name if len(name) <= fits else name[:fits - 1] + "…"
            out.append(f'<text x="{x + 3:.2f}" y="{y + row_h / 2 + 1:.1f}" fill="#fff" pointer-events="none">'
                       f"{_e(text)}</text>")
        out.append("</g>")
    out.append("</svg>")
    if len(spans) > len(shown):
        out.append(f'<p class="htp-note">showing the first {len(shown)} of {len(spans)} events</p>')
    out.append(note)
    return "".join(out)


# ------------------------------------------------------------------------------------------- sections

_CSS = """
.htp-r { font-family: Helvetica, Arial, sans-serif; font-size: 13px; color: #1d1d1d; }
.htp-r h1 { font-size: 20px; margin: 0 0 8px; } .htp-r h2 { font-size: 16px; margin: 22px 0 6px; }
.htp-r table { border-collapse: collapse; margin: 4px 0; font-size: inherit; }
.htp-r th, .htp-r td { border-bottom: 1px solid #e2e2e2; padding: 2px 8px; text-align: left; vertical-align: top; }
.htp-r th { background: #f3f3f3; font-weight: 600; }
.htp-r td.num { text-align: right; font-variant-numeric: tabular-nums; }
.htp-r td code, .htp-r .nowrap { white-space: nowrap; }
.htp-r code, .htp-r pre { font-family: "DejaVu Sans Mono", Menlo, monospace; font-size: 12px; }
.htp-r pre { background: #fafafa; border: 1px solid #e6e6e6; padding: 6px; overflow-x: auto; margin: 4px 0; }
.htp-r .bar { display: inline-block; height: 9px; background: #8c8c8c; vertical-align: middle; }
.htp-r pre.diff span { display: block; min-height: 1.2em; }
.htp-r .add { color: #116611; background: #eaf7ea; } .htp-r .del { color: #a31515; background: #fbeaea; }
.htp-r .hunk { color: #5a5a9a; }
.htp-r .htp-note { color: #666; font-style: italic; margin: 4px 0; }
.htp-r svg { max-width: 100%; height: auto; }
.htp-r details { margin: 2px 0; } .htp-r summary { cursor: pointer; }
"""


def _table(header: list[str], rows: list[list[str]], numeric=()) -> str:
    """An HTML table; cells are HTML already (callers escape)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _notes_html(notes: list[str]) -> str:
    return "".join(f'<p class="htp-note">{_e(n)}</p>' for n in notes)


def _summary_rows(view: _View) -> list[list[str]]:
    plan, m = view.plan, view.manifest
    rows = [["package", f"<code>{_e(view.path)}</code>"], ["target", f"<b>{_e(view.target)}</b>"]]
    for key in ("backend", "binding", "pipeline"):
        if plan.get(key):
            rows.append([key, f"<code>{_e(plan[key])}</code>"])
    for e in view.entrypoints:
        rows.append([f"entry ({_e(e.get('kind', '?'))})", f"<code>{_e(_signature(e))}</code>"])
    plugins = [p for p in m.get("plugins") or [] if isinstance(p, dict)]
    if plugins:
        rows.append(["plugins", _e(", ".join(f"{p.get('name', '?')} {p.get('version', '')}" for p in plugins))])
    if m.get("htp_version"):
        rows.append(["htp", _e(m["htp_version"])])
    return rows


def _passes_table(view: _View, detailed: bool) -> str:
    passes = view.passes()
    if not passes:
        return '<p class="htp-note">no passes recorded</p>'
    longest = max((_number(p.get("duration_us")) or 0 for p in passes), default=0) or 1
    rows = []
    for p in passes:
        us = _number(p.get("duration_us"))
        bar = f'<span class="bar" style="width:{max(us / longest * 120, 1):.0f}px"></span> ' if us is not None else ""
        row = [_e(p.get("index", "")), f"<code>{_e(p['id'])}</code>", _e(p.get("stage", "")),
               f'<span class="nowrap">{_e(p.get("plugin", ""))}</span>',
               f'<span class="nowrap">{bar}{_e(_duration(us) if us is not None else "-")}</span>']
        if detailed:
            diags = p.get("diagnostics") if isinstance(p.get("diagnostics"), list) else []
            row += [_e(p.get("version", "")), _e(p.get("nodes_changed", "")),
                    _e(len(p["rewrites"]) if isinstance(p.get("rewrites"), list) else ""),
                    _e(", ".join(map(str, p.get("provides") or p.get("added") or []))),
                    _e(", ".join(map(str, p.get("invalidated") or p.get("removed") or []))),
                    "ok" if p.get("ok", True) is True else "<b>failed</b>",
                    _e(len(diags) or "")]
        rows.append(row)
    header = ["#", "pass", "stage", "plugin", "time"]
    if detailed:
        header += ["version", "nodes changed", "rewrites", "provides", "invalidates", "", "diagnostics"]
    total = sum(_number(p.get("duration_us")) or 0 for p in passes)
    return (_table(header, rows, numeric=(0, 6, 7) if detailed else (0,)) +
            f'<p class="htp-note">{len(passes)} passes, {_e(_duration(total))} in passes</p>')


def _walk(root: pathlib.Path):
    """(relative path, lstat) of every entry below ``root``; symlinked directories are not entered."""
    out, stack = [], [root]
    while stack and len(out) < _MAX_FILES:
        d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(pathlib.Path(entry.path))
            else:
                out.append((pathlib.Path(entry.path).relative_to(root).as_posix(), st))
    return sorted(out, key=lambda item: item[0])


def _files_html(view: _View) -> str:
    listed = {}
    for key in ("files", "volatile_files"):
        for f in view.manifest.get(key) or []:
            if isinstance(f, dict) and isinstance(f.get("path"), str):
                listed[f["path"]] = f
    rows, total = [], 0
    files = _walk(view.path)
    for rel, st in files:
        f = listed.get(rel, {})
        kind = ("" if stat.S_ISREG(st.st_mode) else
                "symlink" if stat.S_ISLNK(st.st_mode) else "special file")
        role = f.get("role") or ("run output" if rel.startswith(("logs/", "build/")) else "not in the manifest")
        total += st.st_size if stat.S_ISREG(st.st_mode) else 0
        rows.append([f"<code>{_e(rel)}</code>", _e(_size(st.st_size)), _e(role), _e(f.get("writer", "")),
                     f"<b>{_e(kind)}</b>" if kind else ""])
    more = f", listing stopped at {_MAX_FILES}" if len(files) >= _MAX_FILES else ""
    return (_table(["file", "size", "role", "writer", ""], rows, numeric=(1,)) +
            f'<p class="htp-note">{len(rows)} files, {_e(_size(total))}{more}</p>')


_DUMP = re.compile(r"(\d+)_(.+?)(\.before)?\.py")


def _ir_dumps(ir: pathlib.Path) -> list[tuple[int, str, bool, pathlib.Path]]:
    """(index, pass id, is a before-dump, path) of the ``ir/NN_<pass>[.before].py`` dumps, in pass order.
    Taken from the directory listing, not from the trace's ``dumps`` paths, which are not to be trusted."""
    try:
        names = os.listdir(ir)
    except OSError:
        return []
    out = []
    for name in names:
        match = _DUMP.fullmatch(name)
        if match and match.group(2) != "source":
            out.append((int(match.group(1)), match.group(2), bool(match.group(3)), ir / name))
    return sorted(out, key=lambda d: (d[0], not d[2]))


def _diff_html(before: str, after: str, before_name: str, after_name: str) -> tuple[str, int, int]:
    """(HTML of the unified diff, lines added, lines removed)."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), before_name, after_name,
                                      lineterm=""))
    added = sum(1 for l in lines if l.startswith("+") and not l.startswith("+++"))
    removed = sum(1 for l in lines if l.startswith("-") and not l.startswith("---"))
    shown = []
    for line in lines[:_DIFF_LINES]:
        cls = ("hunk" if line.startswith("@@") else "add" if line.startswith("+") else
               "del" if line.startswith("-") else "")
        shown.append(f'<span class="{cls}">{_e(line)}</span>')
    if len(lines) > _DIFF_LINES:
        shown.append(f"<span>{_e(f'... {len(lines) - _DIFF_LINES} more diff lines')}</span>")
    # One block per line, no newlines between them: the blocks break the lines, and a newline would add one.
    return '<pre class="diff">' + "".join(shown) + "</pre>", added, removed


def _ir_html(view: _View) -> str:
    """One collapsible diff per dumped pass: the printed module against the previous dump (the pass's own
    ``.before`` dump when there is one, ``ir/00_source.py`` for the first), and, when the printed text did
    not change, the ``.ast.json`` diff, which shows the attributes the printer leaves out."""
    ir = view.path / "ir"
    dumps = _ir_dumps(ir)
    if not dumps:
        return ('<p class="htp-note">no per-pass dumps in ir/: compile with dump_ir="all" (htp-host compile '
                "--dump-ir=all) to see what each pass changed</p>")
    trace = {str(p["id"]): p for p in view.passes()}
    parts, previous = [], ir / "00_source.py"
    for index, pass_id, is_before, path in dumps:
        if is_before:
            previous = path
            continue
        try:
            before, after = _read_text(previous), _read_text(path)
        except OSError as e:
            parts.append(f"<details><summary>{index:02d} <code>{_e(pass_id)}</code>: {_e(e)}</summary></details>")
            previous = path
            continue
        body, added, removed = _diff_html(before, after, f"ir/{previous.name}", f"ir/{path.name}")
        what = f"+{added} −{removed} lines against {previous.name}"
        if previous.name == "00_source.py":
            what += " (the whole source file; dumps print only the captured functions)"
        if not added and not removed:
            what = f"printed module unchanged from {previous.name}"
            body = ""
            old_json, new_json = previous.with_suffix(".ast.json"), path.with_suffix(".ast.json")
            if old_json.name != "00_source.ast.json" and old_json.exists() and new_json.exists():
                try:
                    jbody, jadded, jremoved = _diff_html(_read_text(old_json), _read_text(new_json),
                                                         f"ir/{old_json.name}", f"ir/{new_json.name}")
                    if jadded or jremoved:
                        what += f"; AST JSON +{jadded} −{jremoved} lines"
                        body = jbody
                except OSError as e:
                    body = f'<p class="htp-note">{_e(e)}</p>'
        changed = _number(trace.get(pass_id, {}).get("nodes_changed"))
        if changed is not None:
            what += f"; {changed:.0f} nodes changed"
        parts.append(f"<details><summary>{index:02d} <code>{_e(pass_id)}</code> — {_e(what)}</summary>"
                     f"{body}</details>")
        previous = path
    return "".join(parts)


def _run_html(report: dict | None, where: str) -> str:
    if report is None:
        return (f'<p class="htp-note">no run report in {_e(where)}: htp.bind(pkg).run(...) or htp-host run '
                "writes one</p>")
    parts = [f"<p><b>{_e(_run_summary(report))}</b></p>"]
    workers = [w for w in report.get("workers") or [] if isinstance(w, dict)]
    if workers:
        parts.append(_table(["worker", "tasks", "steals"],
                            [[_e(w.get("name", "?")), _e(w.get("tasks", "")), _e(w.get("steals", ""))]
                             for w in workers], numeric=(1, 2)))
    parts.append("<details><summary>report.json</summary><pre>" +
                 _e(json.dumps(report, indent=1, sort_keys=True, default=str)) + "</pre></details>")
    return "".join(parts)


def _timeline_html(trace, report: dict | None, where: str, width: int = 960) -> str:
    if trace is None:
        if report is None:
            return f'<p class="htp-note">no run yet, so no task timeline ({_e(where)})</p>'
        return f'<p class="htp-note">the run wrote no trace ({_e(where)})</p>'
    return timeline_svg(trace, width=width, title="task timeline of the last run")


# ------------------------------------------------------------------------------------------------ public

def report_html(pkg_or_path) -> str:
    """The standalone HTML report of a package (what ``show`` writes)."""
    view = _View(pkg_or_path)
    svg, why = render_dot(plan_dot(view.manifest, view.trace))
    plan = svg if svg is not None else (f'<p class="htp-note">{_e(why)}</p><pre>' +
                                        _e("\n".join(f"{p.get('index', '')}. {p['id']} [{p.get('stage', '?')}]"
                                                     for p in view.passes())) + "</pre>")
    notes = [str(n) for n in view.plan.get("notes") or []]
    derivation = [d for d in view.plan.get("derivation") or [] if isinstance(d, dict)]
    if derivation:
        plan += ("<details><summary>why these components (derivation)</summary>" +
                 _table(["component", "kind", "because"],
                        [[f"<code>{_e(d.get('component', ''))}</code>", _e(d.get("kind", "")),
                          _e(d.get("because", ""))] for d in derivation]) + "</details>")
    where = "logs/run/"
    title = f"HTP package {view.path.name} ({view.target})"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{_CSS} body {{ margin: 16px 24px; }}</style></head>
<body class="htp-r">
<h1>HTP package <code>{_e(view.path.name)}</code></h1>
{_notes_html(view.notes)}
<section id="summary">{_table(["", ""], _summary_rows(view))}</section>
<section id="plan"><h2>Plan</h2>{plan}{_notes_html(notes)}</section>
<section id="timeline"><h2>Task timeline</h2>{_timeline_html(view.run_trace, view.run_report, where, 1100)}</section>
<section id="run"><h2>Last run</h2>{_run_html(view.run_report, where)}</section>
<section id="passes"><h2>Passes</h2>{_passes_table(view, detailed=True)}</section>
<section id="ir"><h2>IR after each pass</h2>{_ir_html(view)}</section>
<section id="files"><h2>Files</h2>{_files_html(view)}</section>
<p class="htp-note">Written by htp.show() from the package as it was then; call it again after a new run.</p>
</body></html>
"""


def show(pkg_or_path, out=None, open_browser: bool = False) -> pathlib.Path:
    """Writes the HTML report of a package (an ``htp.Package`` or its directory) and returns its path.
    By default it goes to ``<package>/logs/report.html``: ``logs/`` holds run outputs and is not covered by
    the manifest, so the package still verifies. ``out`` names another file (for a read-only package);
    ``open_browser=True`` opens it with the ``webbrowser`` module."""
    path = pathlib.Path(getattr(pkg_or_path, "path", pkg_or_path))
    if not (path / "manifest.json").is_file():
        raise FileNotFoundError(f"{path} is not an HTP package (no manifest.json)")
    text = report_html(path)
    if out is None:
        logs = path / "logs"
        # Like htp-host run: never write through a symlinked logs/, which could point out of the package.
        if logs.is_symlink() or (os.path.lexists(logs) and not logs.is_dir()):
            raise OSError(f"{logs} is a symlink or not a directory; refusing to write the report through it "
                          "(give show() an out= path)")
        logs.mkdir(exist_ok=True)
        out = logs / "report.html"
    out = pathlib.Path(out)
    # A fresh file (O_EXCL, random name) renamed over the report: a planted symlink in a foreign package's
    # logs/ is neither followed nor written through, and a browser reloading the page never sees half of it.
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise
    if open_browser:
        import webbrowser
        webbrowser.open(out.resolve().as_uri())
    return out


def package_text(pkg) -> str:
    """The REPL summary of a package (``repr``): target and chosen components, entry points, passes with
    their times, files, and the last run."""
    view = _View(pkg)
    plan = view.plan
    chosen = ", ".join(f"{k} {plan[k]}" for k in ("backend", "binding") if isinstance(plan.get(k), str))
    lines = [f"<htp.Package {view.path}", f"  target  {view.target}" + (f" ({chosen})" if chosen else "")]
    lines += [f"  entry   {_signature(e)}" for e in view.entrypoints]
    passes = view.passes()
    if passes:
        total = sum(_number(p.get("duration_us")) or 0 for p in passes)
        items = ", ".join(p["id"] + (f" {_duration(p['duration_us'], 'us')}"
                                     if _number(p.get("duration_us")) is not None else "") for p in passes)
        head = f"  passes  {len(passes)} in {_duration(total, 'us')}: "
        lines += textwrap.wrap(items, 110, initial_indent=head, subsequent_indent=" " * 10,
                               break_on_hyphens=False)
    files = [f for f in view.manifest.get("files") or [] if isinstance(f, dict)]
    lines.append(f"  files   {len(files)} in the manifest, "
                 f"{_size(sum(_number(f.get('size')) or 0 for f in files))}")
    if view.run_report is not None:
        lines.append(f"  run     {_run_summary(view.run_report, 'us')} (logs/run/)")
    lines += [f"  note    {n}" for n in view.notes]
    return _clean("\n".join(lines) + ">")


def package_html(pkg) -> str:
    """The notebook view of a package (``_repr_html_``): summary, passes with times, files, last run's
    timeline. ``htp.show(pkg)`` has the rest (plan graph, IR diffs)."""
    view = _View(pkg)
    files = [f for f in view.manifest.get("files") or [] if isinstance(f, dict)]
    run = ""
    if view.run_report is not None:
        run = (f"<p><b>last run</b>: {_e(_run_summary(view.run_report))}</p>" +
               _timeline_html(view.run_trace, view.run_report, "logs/run/", 900))
    return (f'<div class="htp-r"><style>{_CSS}</style>'
            f"<b>htp.Package</b> <code>{_e(view.path)}</code>{_notes_html(view.notes)}"
            f"{_table(['', ''], _summary_rows(view)[1:])}"
            f"{_passes_table(view, detailed=False)}"
            f"<p>{len(files)} files in the manifest, "
            f"{_e(_size(sum(_number(f.get('size')) or 0 for f in files)))}</p>{run}"
            '<p class="htp-note">htp.show(pkg) writes the full report (plan graph, IR diffs).</p></div>')


def _outputs(result) -> list[tuple[str, str, str]]:
    """(name, shape, dtype) of a run's outputs, whatever array type they are."""
    out = []
    for name in sorted(result.outputs):
        value = result.outputs[name]
        shape = getattr(value, "shape", None)
        out.append((str(name), "x".join(map(str, shape)) if shape is not None else "?",
                    str(getattr(value, "dtype", type(value).__name__))))
    return out


def _run_trace(result):
    report = result.report if isinstance(result.report, dict) else None
    if report is None or not report.get("trace"):
        return None
    trace, _ = _read_json(pathlib.Path(result.run_dir) / _plain_name(report.get("trace"), "trace.json"))
    return trace


def run_text(result) -> str:
    """The REPL summary of a run result: binding, outputs, report summary, where the run's files are."""
    lines = [f"<htp.RunResult binding {result.binding}"]
    lines += [f"  out     {name}: {dtype}[{shape}]" for name, shape, dtype in _outputs(result)]
    if isinstance(result.report, dict):
        lines.append(f"  run     {_run_summary(result.report, 'us')}")
    lines.append(f"  dir     {result.run_dir}")
    return _clean("\n".join(lines) + ">")


def run_html(result) -> str:
    """The notebook view of a run result: binding, outputs, report summary and the task timeline."""
    report = result.report if isinstance(result.report, dict) else None
    outputs = _table(["output", "shape", "dtype"],
                     [[f"<code>{_e(n)}</code>", _e(s), _e(d)] for n, s, d in _outputs(result)])
    summary = f"<p><b>{_e(_run_summary(report))}</b></p>" if report else ""
    return (f'<div class="htp-r"><style>{_CSS}</style><b>htp.RunResult</b> binding '
            f"<code>{_e(result.binding)}</code>, run directory <code>{_e(result.run_dir)}</code>"
            f"{outputs}{summary}{_timeline_html(_run_trace(result), report, str(result.run_dir), 900)}</div>")
