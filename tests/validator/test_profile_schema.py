"""Profiles are checked against a shipped JSON Schema (issue 7, item 2)."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from validator.cli import main
from validator.context import PROFILE_SCHEMA_FILE, ConfigError, Profile, build_profile_schema, profile_schema

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GOOD = str(ROOT / "validator" / "examples" / "bulk-payment-good.json")
REGENERATE = (
    'python -c "import json; from validator.context import *; '
    "PROFILE_SCHEMA_FILE.write_text(json.dumps(build_profile_schema(), indent=2, ensure_ascii=False) + '\\n')\""
)


def test_the_shipped_schema_is_current_and_packaged():
    assert profile_schema() == build_profile_schema(), f"validator/profile.schema.json is stale; regenerate: {REGENERATE}"
    jsonschema.Draft202012Validator.check_schema(profile_schema())
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["validator"]
    assert PROFILE_SCHEMA_FILE.name in package_data


def test_profile_schema_command_prints_the_shipped_file():
    result = CliRunner().invoke(main, ["profile", "schema"])
    assert result.exit_code == 0
    assert json.loads(result.output) == profile_schema()


@pytest.mark.parametrize(("text", "expected"), [
    ("paths: {createSigningBaskets: /v1/signing-baskets}\n", "unknown operation id 'createSigningBaskets'; did you mean 'createSigningBasket'?"),
    ("signature: {algorithms: [rsa-sha265]}\n", "'rsa-sha265' is not a signature algorithm; did you mean 'rsa-sha256'?"),
    ("rules: {kid-invalidd: {severity: error}}\n", "unknown rule id 'kid-invalidd'; did you mean 'kid-invalid'?"),
    ("amount-digit: exact\n", "unknown key 'amount-digit'; did you mean 'amount-digits'?"),
    ("rules: {kid-invalid: {code: KID_INVALDI}}\n", "'KID_INVALDI' is not a message code of the interface; did you mean 'KID_INVALID'?"),
    ("basket-status-ranking: [{basket: RJCT, payments: [RJTC]}]\n", "'RJTC' is not a payment status; did you mean 'RJCT'?"),
    ("today: 2026-13-01\n", "'2026-13-01' is not a date: there is no month 13"),
])
def test_a_misspelt_profile_exits_2_with_did_you_mean(tmp_path, text, expected):
    profile = tmp_path / "bank.yaml"
    profile.write_text(text, encoding="utf-8")
    for args in (["--profile", str(profile), GOOD], ["profile", "check", str(profile)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, result.output
        assert expected in result.output
        assert "Traceback" not in result.output


def test_the_readme_profile_is_valid_and_names_the_schema_for_editors(tmp_path):
    block = re.search(r"A profile \(`--profile`, YAML\).*?```yaml\n(.*?)```", README, re.S).group(1)
    assert block.startswith("# yaml-language-server: $schema=")
    path = tmp_path / "bank.yaml"
    path.write_text(block, encoding="utf-8")
    result = CliRunner().invoke(main, ["profile", "check", str(path)])
    assert result.exit_code == 0, result.output
    assert "obvalidate profile schema >" in README


def test_the_python_api_is_unchanged():
    profile = Profile.from_mapping({"signature": {"algorithms": ["rsa-sha256", "hs2019"]}, "paths": {"createSigningBasket": "/v2/baskets"}})
    assert profile.signature_algorithms == ("rsa-sha256", "hs2019")
    assert profile.paths == {"createSigningBasket": "/v2/baskets"}
    with pytest.raises(ConfigError, match="did you mean 'createSigningBasket'"):
        Profile.from_mapping({"paths": {"createSigningBaskets": "/v2/baskets"}})
