"""README.md's "A first system of your own" (issue 17): the system file and
the Python model, executed as printed, give the same conservative pendulum
(EM: energy to round-off, both constraint levels exact)."""
import os
import re

import livens

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


def _section():
    text = open(README, encoding="utf-8").read()
    return text.split("## A first system of your own", 1)[1].split("\n## ", 1)[0]


def _check_table(line):
    f = line.split()
    assert f[0] == "em" and f[-1] == "ok", line
    assert float(f[1]) < 1e-10 and float(f[4]) < 1e-12 and float(f[5]) < 1e-12, line


def test_readme_python_model_runs(tmp_path, monkeypatch, capsys):
    code = re.search(r"```python\n(.*?)```", _section(), re.S).group(1)
    assert len(code.strip().splitlines()) == 5
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("scheme ")
    _check_table(out[1])


def test_readme_system_file_runs(tmp_path):
    yaml = re.search(r"```yaml\n(.*?)```", _section(), re.S).group(1)
    assert len(yaml.strip().splitlines()) == 5
    path = tmp_path / "pendulum.yaml"
    path.write_text(yaml)
    try:
        model = livens.System.from_file(str(path))
    except livens.InputError as e:
        if "no YAML reader" in str(e):
            import pytest
            pytest.skip("this build has no YAML reader (libyaml)")
        raise
    _check_table(livens.simulate(model, "em", step=0.01, t_end=10).table().splitlines()[1])
