"""What a probe run is given, for `gradguard probe` and the server alike: a value given
(the command line's option, or the editor's setting) wins over pyproject's
`[tool.gradguard.probe]`, which wins over the schema's default."""

from __future__ import annotations

from gradguard.probe.config import ProbeConfig, probe_options
from gradguard.settings_schema import default

TABLE = ProbeConfig("/project", timeout=120.0, memory_mb=2048, device="cuda")


def test_without_a_table_or_options_a_run_gets_the_schemas_defaults() -> None:
    options = probe_options(None)

    assert options.timeout == default("probe.timeout") == 60
    assert options.memory_mb == default("probe.memory_mb")
    assert options.device == default("probe.device") == "cpu"


def test_the_pyproject_table_overrides_the_defaults() -> None:
    assert probe_options(TABLE) == probe_options(None, 120.0, 2048, "cuda")


def test_a_value_given_overrides_the_table() -> None:
    options = probe_options(TABLE, timeout=5.0, memory_mb=512, device="cpu")

    assert (options.timeout, options.memory_mb, options.device) == (5.0, 512, "cpu")


def test_a_memory_limit_of_0_is_no_limit_wherever_it_is_set() -> None:
    assert probe_options(None, memory_mb=0).memory_mb is None
    assert probe_options(ProbeConfig("/project", memory_mb=0)).memory_mb is None
