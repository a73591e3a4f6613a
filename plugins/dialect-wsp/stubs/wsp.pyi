# Editor stubs of the wsp dialect (htp.dialects.wsp). A program is captured, not run: these types say
# how each surface name is written; docs/dialects/wsp.md says what it means.
from typing import Any, Callable, Iterator, Protocol, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

# ---- workloads and schedules

def workload(fn: _F) -> _F:
    """Captures a workload: loops over axes whose leaves are kernel launches."""
    ...

def schedule(w: Callable[..., Any]) -> Callable[[_F], _F]:
    """`@schedule(w)` captures a function whose body is a list of directives for workload `w`."""
    ...

# ---- axes

class Axis(Protocol):
    """An iteration axis: an int extent, Dense[N], DenseDyn(n) or Ragged(n, lengths)."""

class _DenseType:
    def __getitem__(self, n: int) -> Axis: ...

Dense: _DenseType
"""`Dense[N]`: a static extent N."""

def DenseDyn(n: int) -> Axis:
    """An extent known at run time (a scalar parameter, a tensor dimension, a tensor element)."""
    ...

def Ragged(n: int, lengths: Any) -> Axis:
    """n rows, row r of extent lengths[r] (a 1-D integer tensor); binds (row, position)."""
    ...

class SparseRow(Protocol):
    """The selected indices of one row of a Sparse axis."""

class SparseAxis(Protocol):
    def __getitem__(self, row: int) -> SparseRow: ...

def Sparse(n: int, indptr: Any, indices: Any) -> SparseAxis:
    """A CSR axis: row r selects indices[indptr[r]:indptr[r + 1]] (1-D integer tensors)."""
    ...

# ---- loop constructors and blocks

class Block(Protocol):
    def __enter__(self) -> None: ...
    def __exit__(self, *exc: object) -> None: ...

class _P:
    def __call__(self, *axes: int | Axis) -> Iterator[Any]:
        """`for b, h in P(B, H):` a parallel grid; its tasks are independent."""
        ...
    def seq(self, axis: int | Axis) -> Iterator[Any]:
        """`for i in P.seq(n):` task i depends on task i - 1."""
        ...
    def sel(self, row: SparseRow | SparseAxis, index: int = ...) -> Iterator[int]:
        """`for e in P.sel(S[row]):` the indices row `row` of a Sparse axis selects."""
        ...
    def when(self, pred: bool) -> Block:
        """`with P.when(pred):` tasks launched only where pred holds (evaluated at run time)."""
        ...
    def otherwise(self) -> Block:
        """`with P.otherwise():` directly after a P.when block: where its predicate fails."""
        ...
    def pipe(self) -> Block:
        """`with P.pipe():` the statements are pipeline stages; iterations may overlap across stages.
        In a workload that declares channels (`ch = Channel[Tensor[...]](depth=N)`, htp.dialects.csp) the
        stages are processes: `send(ch, k[i](...))`, `k(recv(ch), ...)`, `with consume(ch) as t:`."""
        ...

P: _P

def combine(*tasks: Any) -> Block:
    """Unordered: `combine(k1(...), k2(...))` or `with combine():` — no order between the members."""
    ...

def sequential(*tasks: Any) -> Block:
    """Ordered: `sequential(k1(...), k2(...))` or `with sequential():` — each member after the previous."""
    ...

# ---- schedule directives

class DispatchPolicy(Protocol): ...
class TimingPolicy(Protocol): ...

def round_robin(n: int) -> DispatchPolicy:
    """Task sets dealt to n schedulers in turn."""
    ...

def affinity(axis: str) -> DispatchPolicy:
    """Task sets with the same value of `axis` go to the same scheduler."""
    ...

def hash(axis: str) -> DispatchPolicy:
    """Scheduler chosen by a hash of `axis`."""
    ...

def work_steal() -> DispatchPolicy:
    """Idle schedulers steal single tasks."""
    ...

def dispatch(policy: DispatchPolicy) -> None:
    """How task sets are assigned to schedulers (AICPU threads)."""
    ...

def streams(n: int) -> None:
    """Number of issue streams per scheduler."""
    ...

def stream_by(key: str | Callable[..., int]) -> None:
    """Stream of a task: an axis name or `lambda h: h % 4` over axis variables."""
    ...

immediate: TimingPolicy
"""Issue each task as soon as it is ready."""

def batched(n: int) -> TimingPolicy:
    """Issue ready tasks in batches of n."""
    ...

def timing(policy: TimingPolicy) -> None:
    """When ready tasks are issued to cores."""
    ...

def tile(axis: str, factor: int) -> None:
    """Group `factor` consecutive iterations of `axis` into one task set."""
    ...

def pipeline(depth: int) -> None:
    """Up to `depth` iterations of a sequential loop in flight."""
    ...

def buffer(tensor: str, space: str) -> None:
    """Keep `tensor` in memory space `space` (e.g. "L1", "UB")."""
    ...

def task_window(n: int) -> None:
    """At most n tasks in flight (submitted, not finished)."""
    ...
