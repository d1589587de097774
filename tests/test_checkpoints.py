"""Checkpoint registry and verified loading, against a real HTTP server on 127.0.0.1."""

import functools
import http.server
import shutil
import socket
import threading

import pytest
import torch

from course_utils import checkpoints
from course_utils.checkpoints import CheckpointError


@pytest.fixture
def registry(tmp_path):
    """A registry with one checkpoint 'tiny', whose file is served but not bundled."""
    served = tmp_path / "served"
    served.mkdir()
    registry = tmp_path / "registry.json"
    entry = checkpoints.save_checkpoint(
        {"w": torch.arange(6.0).reshape(2, 3)}, "tiny", "course train tiny", registry=registry, bundled=served
    )
    return {"registry": registry, "served": served, "bundled": tmp_path / "bundled", "entry": entry}


@pytest.fixture
def server(registry):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(registry["served"]))
    handler.log_message = lambda *args: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(checkpoints.URL_VARIABLE, raising=False)
    return tmp_path / "cache"


def load(registry):
    return checkpoints.load_checkpoint("tiny", registry=registry["registry"], bundled=registry["bundled"])


def test_bundled_checkpoints_match_the_registry():
    registry = checkpoints.read_registry()
    assert {"colour_mode1", "colour_mode2", "colour_replay"} <= set(registry)
    for name, entry in registry.items():
        assert entry["command"].startswith("course train ")
        assert checkpoints.file_hashes(checkpoints.BUNDLED / entry["file"]) == {k: entry[k] for k in ("md5", "sha256", "size")}
        state = checkpoints.load_checkpoint(name)
        assert all(isinstance(v, torch.Tensor) for v in state.values())


def test_bundled_copy_is_used_without_network(registry):
    registry["bundled"].mkdir()
    shutil.copy(registry["served"] / "tiny.pt", registry["bundled"])
    assert torch.equal(load(registry)["w"], torch.arange(6.0).reshape(2, 3))


def test_good_download_is_verified_and_cached(registry, server, cache, monkeypatch):
    monkeypatch.setenv(checkpoints.URL_VARIABLE, server)
    assert torch.equal(load(registry)["w"], torch.arange(6.0).reshape(2, 3))
    assert checkpoints.file_hashes(cache / "tiny.pt")["sha256"] == registry["entry"]["sha256"]


def test_offline_with_a_valid_cache(registry, server, cache, monkeypatch):
    monkeypatch.setenv(checkpoints.URL_VARIABLE, server)
    load(registry)
    monkeypatch.setenv(checkpoints.URL_VARIABLE, "http://127.0.0.1:9")  # nothing listens there
    assert torch.equal(load(registry)["w"], torch.arange(6.0).reshape(2, 3))


def test_corrupted_download_is_deleted_and_explained(registry, server, cache, monkeypatch):
    path = registry["served"] / "tiny.pt"
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    monkeypatch.setenv(checkpoints.URL_VARIABLE, server)
    with pytest.raises(CheckpointError) as error:
        load(registry)
    message = str(error.value)
    assert "tiny.pt" in message and registry["entry"]["sha256"] in message and "course train tiny" in message
    assert not (cache / "tiny.pt").exists()


def test_truncated_download_is_deleted_and_explained(registry, server, cache, monkeypatch):
    path = registry["served"] / "tiny.pt"
    path.write_bytes(path.read_bytes()[:200])
    monkeypatch.setenv(checkpoints.URL_VARIABLE, server)
    with pytest.raises(CheckpointError, match="corrupt"):
        load(registry)
    assert not (cache / "tiny.pt").exists()


def test_md5_is_checked_too(registry, server, cache, monkeypatch):
    """A file whose SHA-256 matches but whose registry MD5 does not is rejected and deleted."""
    text = registry["registry"].read_text().replace(registry["entry"]["md5"], "0" * 32)
    registry["registry"].write_text(text)
    monkeypatch.setenv(checkpoints.URL_VARIABLE, server)
    with pytest.raises(CheckpointError, match="MD5 expected 0{32}"):
        load(registry)
    assert not (cache / "tiny.pt").exists()


def test_404_is_explained(registry, server, monkeypatch):
    (registry["served"] / "tiny.pt").unlink()
    monkeypatch.setenv(checkpoints.URL_VARIABLE, server)
    with pytest.raises(CheckpointError, match="404"):
        load(registry)


def test_unreachable_server_is_explained(registry, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens on it
    monkeypatch.setenv(checkpoints.URL_VARIABLE, f"http://127.0.0.1:{port}")
    with pytest.raises(CheckpointError, match="Could not reach .*offline"):
        load(registry)


def test_corrupt_bundled_copy_is_kept_and_explained(registry):
    registry["bundled"].mkdir()
    bundled = registry["bundled"] / "tiny.pt"
    bundled.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError) as error:
        load(registry)
    message = str(error.value)
    assert "does not match the registry" in message and registry["entry"]["sha256"] in message
    assert "course train tiny" in message and "Reinstall the course package" in message  # outside the repository
    assert bundled.exists()  # part of the installed package or under version control: never deleted


def test_a_damaged_checkpoint_in_the_repository_says_how_git_restores_it():
    local = checkpoints.BUNDLED / "colour_mode1.pt"
    advice = checkpoints._restore(local, "Regenerate it with `course train colour`")
    assert "`course train colour`" in advice and "git checkout -- assets/checkpoints/colour_mode1.pt" in advice


def test_unknown_name_lists_known_ones(registry):
    with pytest.raises(CheckpointError, match="Known checkpoints: tiny"):
        checkpoints.load_checkpoint("tinny", registry=registry["registry"], bundled=registry["bundled"])


def test_pickled_modules_are_refused(tmp_path):
    """weights_only=True: a checkpoint holding a pickled module does not load, even with good hashes."""
    path = tmp_path / "bundled" / "module.pt"
    path.parent.mkdir()
    torch.save(torch.nn.Linear(2, 2), path)
    registry = tmp_path / "registry.json"
    checkpoints.register("module", path, "course train module", registry=registry)
    with pytest.raises(CheckpointError, match="could not be loaded as a state_dict"):
        checkpoints.load_checkpoint("module", registry=registry, bundled=path.parent)
