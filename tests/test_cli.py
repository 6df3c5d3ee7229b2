"""The command line: bad input names the valid choices; verify passes on the stored data."""
import subprocess
import sys

import pytest

from gelucheck.cli import main


@pytest.mark.parametrize("argv, valid", [
    (["reference", "build", "--dtype", "float8"], "float16, bfloat16, float32, float64"),
    (["reference", "verify", "--dtype", "fp32"], "float16, bfloat16, float32, float64"),
])
def test_bad_choices_list_the_valid_names(argv, valid, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert valid in capsys.readouterr().err


def test_verify_default_passes_and_reports_arb(capsys):
    assert main(["reference", "verify", "--dtype", "bfloat16", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "reference data OK" in out
    if pytest.importorskip("flint", reason="python-flint is not installed"):
        assert "Arb proved" in out


def test_verify_fails_on_a_missing_directory(tmp_path, capsys):
    assert main(["reference", "verify", "--directory", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "manifest.json: missing" in out and "FAILED" in out


def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "gelucheck.cli", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "reference" in out
