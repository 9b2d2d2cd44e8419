"""Modules that can be called: ``evalframe.audit`` is both a module and the function it is named for.

The public API calls ``ef.audit(plan, ledger)``, while ``import evalframe.audit
as m`` must give the module (to read its constants, to patch it in a test). A
package attribute cannot be both, so the module itself is made callable: its
class becomes :class:`CallableModule`, a :class:`types.ModuleType` subclass
whose ``__call__`` forwards to the module's function. Assigning a module's
``__class__`` to a ``ModuleType`` subclass is supported since Python 3.5 (the
mechanism PEP 549 discusses); nothing else about the module changes.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

#: The module attribute naming the function a call forwards to.
_TARGET = "__evalframe_call__"


class CallableModule(types.ModuleType):
    """A module whose call is a call of one of its functions (see :func:`make_callable`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the module's function with the same arguments."""
        return getattr(self, getattr(self, _TARGET))(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        """The function's signature, so that ``inspect.signature`` and ``help`` show its parameters."""
        return inspect.signature(getattr(self, getattr(self, _TARGET)))


def make_callable(module_name: str, function_name: str) -> None:
    """Make the module ``module_name`` callable as its function ``function_name``.

    Called at the end of the module (or package ``__init__``) itself, once the function is defined.

    Parameters
    ----------
    module_name
        The module's ``__name__`` (it must be imported, i.e. in ``sys.modules``).
    function_name
        The name of the module attribute a call forwards to (looked up at each call, so a patched
        function is the one called).

    Examples
    --------
    >>> import types, sys
    >>> demo = types.ModuleType("demo")
    >>> demo.double = lambda x: 2 * x
    >>> sys.modules["demo"] = demo
    >>> make_callable("demo", "double")
    >>> demo(21), isinstance(demo, types.ModuleType)
    (42, True)
    >>> del sys.modules["demo"]
    """
    module = sys.modules[module_name]
    setattr(module, _TARGET, function_name)
    module.__class__ = CallableModule
