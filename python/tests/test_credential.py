"""The job credential must be secret (0600), well-formed, and never silently replaced."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from iorelay.credential import create_credential, read_credential


def test_credential_is_64_hex_chars_and_newline(tmp_path: Path) -> None:
    path = create_credential(tmp_path / "cred")
    text = path.read_text()
    assert re.fullmatch(r"[0-9a-f]{64}\n", text)
    assert read_credential(path) == text.strip()


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_credential_mode_is_0600_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        path = create_credential(tmp_path / "cred")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_credential_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "cred"
    path.write_text("precious\n")
    with pytest.raises(FileExistsError):
        create_credential(path)
    assert path.read_text() == "precious\n"


def test_credential_refuses_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    link = tmp_path / "cred"
    link.symlink_to(target)
    with pytest.raises(FileExistsError):
        create_credential(link)
    assert not target.exists()


def test_credentials_differ(tmp_path: Path) -> None:
    a = read_credential(create_credential(tmp_path / "a"))
    b = read_credential(create_credential(tmp_path / "b"))
    assert a != b


def test_read_credential_rejects_malformed(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.write_text("abc\n")
    with pytest.raises(ValueError, match="not an iorelay credential"):
        read_credential(bad)


def test_the_credential_command_makes_one_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from iorelay import cli

    path = tmp_path / "job.key"
    assert cli.main(["credential", str(path)]) == 0
    secret = read_credential(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert cli.main(["credential", str(path)]) == 1
    assert "File exists" in capsys.readouterr().err
    assert read_credential(path) == secret
