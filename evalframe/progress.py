"""The progress callback library functions take: the library reports steps, the caller draws them.

The library keeps no progress state and prints nothing; the ``evalframe``
command passes a callback that drives rich progress bars on a terminal (a plain line
every ten seconds when stderr is not one).
"""

from __future__ import annotations

from collections.abc import Callable

#: Called as ``progress(stage, done, total)``: e.g. ``("candidates audited", 3, 20)``. ``total`` is the number
#: of steps of the stage; ``done`` counts those finished so far.
Progress = Callable[[str, int, int], None]
