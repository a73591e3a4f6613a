# Editor stub of the `csp` dialect (plugin dialect-csp):
#   from htp.dialects.csp import program, process, Channel, Event, send, recv, consume, replicate
# Programs are captured, not executed: these signatures describe what csp.canonicalize accepts.
# The full surface, the checks and the csp.graph schema are in docs/dialects/csp.md.
from typing import Any, Callable, Generic, Iterator, Sequence, TypeVar, overload

_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")

class Channel(Generic[_T]):
    """`Channel[T](depth=N, pack=P)`: a bounded FIFO of `T` (a `Tile[...]` or `Tensor[...]`) with N slots,
    P elements per transfer. Declared in a @program body, or in a @workload body whose `with P.pipe():`
    stages use it (tensor elements)."""
    def __init__(self, *, depth: int, pack: int = ...) -> None: ...

class Event:
    """`Event()`: a depth-0 channel without a value; `send(ev)` and `recv(ev)` meet (rendezvous)."""
    def __init__(self) -> None: ...

class Process:
    """A process of a program: `process("name").produces(ch, ...).consumes(ch, ...).body(fn)`."""
    def produces(self, *channels: Channel[Any] | Event) -> Process: ...
    def consumes(self, *channels: Channel[Any] | Event) -> Process: ...
    def body(self, fn: Callable[[], None]) -> Process: ...

def program(fn: _F) -> _F:
    """Marks the entry that declares channels and wires processes; parameters as kernels
    (`X: In[Tensor[256, 128, f32]]`, `n: Scalar[i32]`)."""

@overload
def process(name: str) -> Process: ...
@overload
def process(fn: _F) -> _F: ...
@overload
def process(*, name: str = ..., produces: Sequence[Channel[Any] | Event] = ...,
            consumes: Sequence[Channel[Any] | Event] = ...) -> Callable[[_F], _F]: ...

@overload
def send(ch: Channel[_T], value: _T) -> None: ...
@overload
def send(ch: Event) -> None: ...

@overload
def recv(ch: Channel[_T]) -> _T: ...
@overload
def recv(ch: Event) -> None: ...

class Stream(Generic[_T]):
    """The items of a channel as a finite stream: `for x in consume(ch):`, or in a pipe stage of a
    workload `with consume(ch) as x:` (the block runs once per item)."""
    def __iter__(self) -> Iterator[_T]: ...
    def __enter__(self) -> _T: ...
    def __exit__(self, *exc: object) -> None: ...

def consume(ch: Channel[_T]) -> Stream[_T]:
    """`for x in consume(ch):` receives every item the producers of `ch` send (a finite stream)."""

def replicate(p: Process | Callable[..., Any], n: int) -> None:
    """Runs `n` copies of process `p`; they share its channels."""

def connect(sources: Sequence[Channel[Any]], destinations: Sequence[Channel[Any]]) -> None:
    """Links channels of one element type: one to many (distribute), many to one (join) or one to one."""
