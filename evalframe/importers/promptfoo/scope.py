"""Which (provider × prompt) columns a promptfoo test runs on: the test's ``prompts`` and ``providers`` filters.

promptfoo runs every test on every column unless the test (or ``defaultTest``) names the prompts or the
providers it runs on: a test-level ``prompts: [...]`` keeps the columns whose prompt the list names, a
test-level ``providers: [...]`` the columns whose provider it names (a provider's own ``prompts`` already
shaped the columns, ``prompts[]`` of the export). A name refers to a prompt (or a provider) when it equals its
label or its id, when it ends in ``*`` and the label or id starts with what precedes the ``*``, or when the
label or id starts with the name followed by ``:`` (a group: ``Math`` names ``Math:Basic``). An empty list
names nothing: the test runs on no column. This is the behaviour promptfoo documents for "Filtering tests by
prompt" (https://www.promptfoo.dev/docs/configuration/test-cases), written here from that description.

The export records a column's prompt label and a hash as its id; the id the config gave a prompt (``prompts:
[{id: pain_v1, label: ...}]``), which is what a test's filter names, is found through the config's prompt of
the same label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    """The names a (provider × prompt) column answers to: its prompt's labels and ids, its provider's."""

    prompt_names: frozenset[str]
    provider_names: frozenset[str]


@dataclass(frozen=True)
class Scope:
    """A test's filters: the prompt and provider names it runs on (None: every one)."""

    prompts: tuple[str, ...] | None = None
    providers: tuple[str, ...] | None = None

    @property
    def scoped(self) -> bool:
        """Whether the test names its prompts or providers (else it runs on every column)."""
        return self.prompts is not None or self.providers is not None

    def allows(self, column: Column) -> bool:
        """Whether the test runs on ``column``.

        Examples
        --------
        >>> col = Column(frozenset({"pain_v1", "Pain Scorer v1"}), frozenset({"gpt-4o", "openai:gpt-4o"}))
        >>> Scope(prompts=("pain_v1", "pain_v2")).allows(col), Scope(prompts=("ideas_v2",)).allows(col)
        (True, False)
        >>> Scope(providers=("openai:*",)).allows(col), Scope(prompts=()).allows(col), Scope().allows(col)
        (True, False, True)
        """
        return _allowed(self.prompts, column.prompt_names) and _allowed(self.providers, column.provider_names)

    def unmatched(self, columns: Iterable[Column]) -> list[str]:
        """The names of the filters that no column answers to (``prompts`` names, then ``providers`` names)."""
        cols = list(columns)
        out = [r for r in self.prompts or () if not any(ref_matches(r, c.prompt_names) for c in cols)]
        out += [r for r in self.providers or () if not any(ref_matches(r, c.provider_names) for c in cols)]
        return out

    def describe(self) -> str:
        """The filters in words, for notes."""
        parts = []
        if self.prompts is not None:
            parts.append(f"prompts {list(self.prompts)}")
        if self.providers is not None:
            parts.append(f"providers {list(self.providers)}")
        return " and ".join(parts) or "no filter"


def ref_matches(ref: str, names: Iterable[str]) -> bool:
    """Whether the filter name ``ref`` refers to something called by any of ``names``.

    Examples
    --------
    >>> ref_matches("Math:*", ["Math:Basic"]), ref_matches("Math", ["Math:Basic"]), ref_matches("Mat", ["Math"])
    (True, True, False)
    """
    for name in names:
        if not name:
            continue
        if name == ref or name.startswith(f"{ref}:"):
            return True
        if ref.endswith("*") and name.startswith(ref[:-1]):
            return True
    return False


def _allowed(refs: Sequence[str] | None, names: Iterable[str]) -> bool:
    if refs is None:
        return True
    return any(ref_matches(r, names) for r in refs)


def _names(value: Any) -> tuple[str, ...] | None | str:
    """A filter as written: None when absent, the names, or why it cannot be read (a string)."""
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return "not a list of names"


def scope_of(test: Mapping[str, Any], default: Mapping[str, Any]) -> Scope | str:
    """The filters of one test (its own, else ``defaultTest``'s), or why they cannot be read.

    Examples
    --------
    >>> scope_of({"prompts": ["a"]}, {"providers": ["p"]})
    Scope(prompts=('a',), providers=('p',))
    >>> scope_of({"prompts": "file://x.yaml"}, {})
    "the test's prompts filter is not a list of names"
    """
    found: dict[str, tuple[str, ...] | None] = {}
    for key in ("prompts", "providers"):
        value = _names(test[key] if key in test else default.get(key))
        if isinstance(value, str):
            return f"the test's {key} filter is {value}"
        found[key] = value
    return Scope(prompts=found["prompts"], providers=found["providers"])


def config_prompt_ids(config: Mapping[str, Any]) -> dict[str, set[str]]:
    """Prompt label → the ids the config gave the prompts of that label (what a test's filter may name).

    Examples
    --------
    >>> config_prompt_ids({"prompts": [{"id": "pain_v1", "label": "Pain v1"}, "plain text"]})
    {'Pain v1': {'pain_v1'}}
    """
    out: dict[str, set[str]] = {}
    prompts = config.get("prompts")
    for p in prompts if isinstance(prompts, list) else []:
        if isinstance(p, dict) and isinstance(p.get("label"), str) and isinstance(p.get("id"), str):
            out.setdefault(p["label"], set()).add(p["id"])
    return out


def config_provider_ids(config: Mapping[str, Any]) -> dict[str, set[str]]:
    """Provider key (label, else id) → the ids the config gave the providers of that key.

    Examples
    --------
    >>> config_provider_ids({"providers": [{"id": "https", "label": "Planner API"}, "openai:gpt-4o"]})
    {'Planner API': {'https'}, 'openai:gpt-4o': {'openai:gpt-4o'}}
    """
    out: dict[str, set[str]] = {}
    providers = config.get("providers")
    for p in providers if isinstance(providers, list) else []:
        if isinstance(p, str):
            out.setdefault(p, set()).add(p)
        elif isinstance(p, dict) and isinstance(p.get("id"), str):
            key = p.get("label") if isinstance(p.get("label"), str) and p.get("label") else p["id"]
            out.setdefault(str(key), set()).add(p["id"])
    return out
