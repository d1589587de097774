"""Pretrained checkpoints: a hash registry, verified loading, optional verified download.

``assets/checkpoints.json`` lists every checkpoint: its file name, MD5, SHA-256, size in
bytes and the ``course train ...`` command that produces it. Checkpoints are state_dicts
saved with ``torch.save`` and loaded with ``torch.load(weights_only=True)``: never pickled
modules.

``load_checkpoint(name)`` uses the copy bundled in ``assets/checkpoints/`` when both its
hashes match. Otherwise, if ``COURSE_CHECKPOINT_URL`` is set, it downloads
``<url>/<file>`` with pooch into the cache folder (``COURSE_CACHE``, default
``~/.cache/rl-course``), verifying both hashes; a file that fails is deleted and a
``CheckpointError`` says which file, the expected and actual hashes, and what to do.
A bundled copy that fails its hashes is never deleted (it is under version control, or part of
the installed package: reinstalling restores it, and the message says so).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import torch

from course_utils.paths import ASSETS, ROOT

REGISTRY = ASSETS / "checkpoints.json"
BUNDLED = ASSETS / "checkpoints"
URL_VARIABLE = "COURSE_CHECKPOINT_URL"


class CheckpointError(RuntimeError):
    """A checkpoint is missing, corrupt or could not be downloaded; the message says what to do."""


def file_hashes(path: str | os.PathLike) -> dict:
    """MD5, SHA-256 (hex) and size in bytes of a file."""
    md5, sha = hashlib.md5(), hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            md5.update(block)
            sha.update(block)
            size += len(block)
    return {"md5": md5.hexdigest(), "sha256": sha.hexdigest(), "size": size}


def read_registry(registry: Path = REGISTRY) -> dict:
    """The registry as ``{name: {"file", "md5", "sha256", "size", "command"}}``."""
    if not registry.exists():
        return {}
    return json.loads(registry.read_text())


def register(name: str, path: Path, command: str, registry: Path = REGISTRY) -> dict:
    """Add or update ``name`` in the registry with the hashes of ``path``; returns the entry."""
    entries = read_registry(registry)
    entry = {"file": Path(path).name, **file_hashes(path), "command": command}
    entries[name] = entry
    registry.write_text(json.dumps(dict(sorted(entries.items())), indent=2) + "\n")
    return entry


def cache_dir() -> Path:
    """Where downloaded checkpoints are kept (``COURSE_CACHE`` or ``~/.cache/rl-course``)."""
    return Path(os.environ.get("COURSE_CACHE", Path.home() / ".cache" / "rl-course"))


def _mismatch(path: Path, entry: dict) -> str | None:
    """A description of the first hash that does not match, or None if the file is good."""
    actual = file_hashes(path)
    for key in ("sha256", "md5"):
        if actual[key] != entry[key]:
            return (
                f"{key.upper()} expected {entry[key]}, got {actual[key]} "
                f"(size expected {entry['size']} bytes, got {actual['size']})"
            )
    return None


def checkpoint_path(name: str, registry: Path = REGISTRY, bundled: Path = BUNDLED) -> Path:
    """A verified local path for checkpoint ``name`` (bundled copy, cache, or download)."""
    entries = read_registry(registry)
    if name not in entries:
        known = ", ".join(sorted(entries)) or "none"
        raise CheckpointError(f"No checkpoint named {name!r} in {registry}. Known checkpoints: {known}.")
    entry = entries[name]
    regenerate = f"Regenerate it with `{entry['command']}`"
    local = bundled / entry["file"]
    problem = None
    if local.exists():
        problem = _mismatch(local, entry)
        if problem is None:
            return local
        problem = f"The bundled checkpoint {local} does not match the registry: {problem}."
    base_url = os.environ.get(URL_VARIABLE, "").rstrip("/")
    if not base_url:
        why = problem or f"The bundled checkpoint {local} is missing."
        raise CheckpointError(f"{why} {_restore(local, regenerate)}, or set {URL_VARIABLE} to a server that has {entry['file']}.")
    return _download(entry, base_url, regenerate)


def _restore(local: Path, regenerate: str) -> str:
    """How to get a good copy back: from git in the repository, by reinstalling elsewhere."""
    if (ROOT / ".git").exists() and local.resolve().is_relative_to(ROOT):
        return f"{regenerate}, restore it with `git checkout -- {local.resolve().relative_to(ROOT)}`"
    return (
        f"Reinstall the course package to restore it (`pip install --force-reinstall --no-deps <the rl-course wheel>`; "
        f"instructors: `{regenerate[len('Regenerate it with '):]}`)"
    )


def _download(entry: dict, base_url: str, regenerate: str) -> Path:
    import pooch
    import requests

    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / entry["file"]
    url = f"{base_url}/{entry['file']}"
    try:
        pooch.retrieve(url, known_hash=f"sha256:{entry['sha256']}", fname=entry["file"], path=folder, progressbar=False)
    except ValueError as error:  # pooch: hash mismatch (it deletes the temporary download)
        target.unlink(missing_ok=True)
        raise CheckpointError(
            f"The download of {entry['file']} from {url} is corrupt: {error} "
            f"The file was deleted. Check {URL_VARIABLE} points at the course's files, or {regenerate}."
        ) from None
    except requests.exceptions.HTTPError as error:
        raise CheckpointError(
            f"Could not download {entry['file']} from {url}: {error}. Check {URL_VARIABLE}, or {regenerate}."
        ) from None
    except (requests.exceptions.RequestException, OSError) as error:
        raise CheckpointError(
            f"Could not reach {url} ({type(error).__name__}). You may be offline: {regenerate}, "
            f"or set {URL_VARIABLE} to a server you can reach."
        ) from None
    problem = _mismatch(target, entry)  # pooch checked SHA-256; check MD5 and size too
    if problem:
        target.unlink(missing_ok=True)
        raise CheckpointError(f"The download of {entry['file']} is corrupt: {problem}. The file was deleted. {regenerate}.")
    return target


def load_checkpoint(name: str, registry: Path = REGISTRY, bundled: Path = BUNDLED) -> dict:
    """The verified state_dict of checkpoint ``name`` (loaded with ``weights_only=True``)."""
    path = checkpoint_path(name, registry, bundled)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # hashes matched but the content is not a safe state_dict
        raise CheckpointError(f"{path} could not be loaded as a state_dict ({error}).") from None


def save_checkpoint(state_dict: dict, name: str, command: str, registry: Path = REGISTRY, bundled: Path = BUNDLED) -> dict:
    """Save ``state_dict`` as ``<bundled>/<name>.pt`` and record it in the registry."""
    bundled.mkdir(parents=True, exist_ok=True)
    path = bundled / f"{name}.pt"
    torch.save({k: v.detach().clone().contiguous() for k, v in state_dict.items()}, path)
    return register(name, path, command, registry)
