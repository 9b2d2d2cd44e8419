"""Settings each importer records for a comparison (``settings`` in each export's info; SPEC §6c, issue 43).

Every expected key and value below is read off the real file named in its test (the provider entry of a
promptfoo config, a HELM ``run_spec.json``'s ``adapter_spec``, an every_eval_ever record's
``generation_config``, an EvalScope ``configs/task_config_*.yaml``); values are the canonical texts of
:func:`evalframe.compare.settings.setting_text` (strings bare, the rest compact JSON).
"""

from __future__ import annotations

import json

import pytest

from evalframe.compare.settings import (
    not_comparable_keys,
    pooled_settings_notes,
    recorded_settings,
    settings_side_by_side,
)
from evalframe.importers import evalscope, every_eval_ever, helm, promptfoo
from tests.conftest import real

PROMPTFOO = real("promptfoo/krystianbergmann-prompt-eval-workbench/promptfoo-results.json")
HELM = real(
    "helm/evaleval-every_eval_ever/tests/data/helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"
)
EEE = real(
    "every_eval_ever/evaleval-every_eval_ever-PR30/data/ai2_arc/ollama/qwen2.5-0.5b/"
    "75e7b3c4-5d2f-4526-aef0-9ccd88690f5a.json"
)
EVALSCOPE = real("evalscope/modelscope-evalscope/examples/viz/qwen2.5-7b-instruct", "real2")


def _need(path: object) -> None:
    if not getattr(path, "exists", lambda: False)():
        pytest.skip(f"{path} is not laid beside the repository")


def test_promptfoo_records_its_providers_options() -> None:
    _need(PROMPTFOO)
    # config.providers: [{"id": "openai:chat:gpt-4o-mini", "config": {"temperature": 0, "max_tokens": 256}}]
    imported = promptfoo.read([PROMPTFOO])
    assert recorded_settings(imported.info, "openai:chat:gpt-4o-mini") == {
        "config.max_tokens": "256",
        "config.temperature": "0",
    }


def test_helm_records_the_run_spec_adapter_and_max_eval_instances() -> None:
    _need(HELM)
    imported = helm.read([HELM])
    settings = recorded_settings(imported.info, "openai/gpt2")
    assert settings is not None
    # adapter_spec of run_spec.json
    spec = json.loads((HELM / "run_spec.json").read_text())["adapter_spec"]
    assert (spec["temperature"], spec["max_tokens"], spec["max_train_instances"], spec["max_eval_instances"]) == (
        0.0, 1, 5, 10)  # fmt: skip
    assert {k: settings[k] for k in ("temperature", "max_tokens", "max_train_instances", "max_eval_instances")} == {
        "temperature": "0.0",
        "max_tokens": "1",
        "max_train_instances": "5",
        "max_eval_instances": "10",
    }
    assert settings["method"] == "multiple_choice_joint"
    assert settings["stop_sequences"] == '["\\n"]'
    # the model's identity (model, model_deployment huggingface/gpt2) is the candidate, not a setting
    assert "model" not in settings
    assert "model_deployment" not in settings


def test_every_eval_ever_records_the_generation_config() -> None:
    _need(EEE)
    imported = every_eval_ever.read([EEE])
    # evaluation_results[0].generation_config.generation_args: reasoning false, one multiple_choice step
    assert recorded_settings(imported.info, "ollama/qwen2.5-0.5b") == {
        "generation_args.agentic_eval_config.available_tools": "[]",
        "generation_args.eval_limits": "{}",
        "generation_args.eval_plan.config": "{}",
        "generation_args.eval_plan.name": "plan",
        "generation_args.eval_plan.steps": '[{"params":{},"params_passed":{},"solver":"multiple_choice"}]',
        "generation_args.reasoning": "false",
        "generation_args.sandbox": "{}",
    }


def test_evalscope_records_the_task_config() -> None:
    _need(EVALSCOPE)
    imported = evalscope.read([EVALSCOPE])
    settings = recorded_settings(imported.info, "qwen2.5-7b-instruct", task="gsm8k")
    assert settings is not None
    # configs/task_config_86b85a.yaml: top-level keys, each as its YAML text
    assert {k: settings[k] for k in ("limit", "seed", "repeats", "eval_type", "generation_config")} == {
        "limit": "10",
        "seed": "42",
        "repeats": "1",
        "eval_type": "openai_api",
        "generation_config": "batch_size: 10\nstream: true\ntemperature: 0.7\ntimeout: 60000",
    }
    assert "work_dir" not in settings  # a place, not a setting


def test_two_evalscope_models_are_compared_key_by_key() -> None:
    other = real("evalscope/modelscope-evalscope/examples/viz/qwen2.5-14b-instruct", "real2")
    _need(EVALSCOPE)
    _need(other)
    imported = evalscope.read([EVALSCOPE, other])
    table = settings_side_by_side(imported.info, "qwen2.5-7b-instruct", "qwen2.5-14b-instruct", task="gsm8k")
    limit = table.filter(table["setting"] == "limit").row(0, named=True)
    assert (limit["baseline"], limit["candidate"], limit["equal"]) == ("10", "10", True)
    # the two configs differ only in the model's identity and places (model, model_id, use_cache)
    assert not_comparable_keys(table) == []


def test_a_setting_given_as_a_number_or_as_its_text_is_one_value_on_every_path() -> None:
    # One spelling of a value (setting_text): an export built in Python with epochs=2 and an import's "2" agree
    # in the side-by-side table and in the pooled-settings notes; None is JSON's null on both.
    exports = [
        {"candidate": "a", "source": "a1.json", "settings": {"epochs": 2, "limit": None}},
        {"candidate": "a", "source": "a2.json", "settings": {"epochs": "2", "limit": "null"}},
        {"candidate": "b", "source": "b.json", "settings": {"epochs": "2", "limit": 5}},
    ]
    assert settings_side_by_side(exports, "a", "b").rows() == [
        ("epochs", "2", "2", True, True),
        ("limit", "null", "5", False, True),
    ]
    assert pooled_settings_notes(exports) == []
    assert recorded_settings(exports, "a") == {"epochs": "2", "limit": "null"}
