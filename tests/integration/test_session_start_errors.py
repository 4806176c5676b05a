"""A session that cannot start says why and what to do."""

from pathlib import Path

import yaml

from tests.integration.dbt_process import run_dbt_process


def write_project(root: Path, **target: object) -> Path:
    (root / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "broken", "version": "1.0", "profile": "broken"})
    )
    profile = {"type": "spark_streams", "method": "session", "schema": "s", **target}
    (root / "profiles.yml").write_text(
        yaml.safe_dump({"broken": {"target": "dev", "outputs": {"dev": profile}}})
    )
    return root


def test_unresolvable_delta_package_names_the_fix(tmp_path: Path) -> None:
    missing = "io.delta:delta-spark-does-not-exist_2.13:0.0.1"
    project = write_project(tmp_path, delta_package=missing)
    result = run_dbt_process(project, "debug")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "The embedded Spark session did not start" in output
    assert "unresolved dependency" in output
    assert "make jars" in output
    assert (project / "logs" / "spark-jvm.log").exists()


def test_empty_jars_dir_names_the_fix(tmp_path: Path) -> None:
    (tmp_path / "jars").mkdir()
    project = write_project(tmp_path, jars_dir="jars")
    result = run_dbt_process(project, "debug")
    assert result.returncode != 0
    assert "holds no .jar files. Run `make jars`" in result.stdout + result.stderr
