"""The source resolver: mirror, environment, cache, download, checksums, clear errors."""

from __future__ import annotations

import hashlib
import http.server
import io
import threading
import zipfile

import pytest

from consistency_bench.bench.errors import SourceError, SourceUnavailableError
from consistency_bench.bench.registries import source_files as sources
from consistency_bench.bench.registries.source_files import SOURCES, SourceFile, SourceResolver


def test_manifest_urls_are_pinned_commits():
    snli = SOURCES["becel/snli/test.tsv"]
    assert snli.url == (
        "https://raw.githubusercontent.com/MJ-Jang/BECEL/"
        "f5bdd1196e46323e6ec3f4e651bcad78b1883b04/data/snli/test.tsv"
    )
    assert snli.md5 == "acd3380d7ab8d4335cb14bd325bea5f3"
    wic = SOURCES["wic/train/train.gold.txt"]
    assert wic.url.endswith("/HW2/WiC_dataset.zip") and wic.member == "train/train.gold.txt"
    assert all(s.md5 for p, s in SOURCES.items() if not p.startswith("qqp/"))


def test_mirror_files_verify(corpora, tmp_path):
    resolver = SourceResolver(corpora, cache_dir=tmp_path, download=False)
    assert resolver.path("becel/rte/semantic.tsv") == corpora / "becel/rte/semantic.tsv"


def test_flag_then_environment_then_cache(corpora, tmp_path, monkeypatch):
    flag, env, cache = tmp_path / "flag", tmp_path / "env", tmp_path / "cache"
    name = "becel/wic/semantic.tsv"
    data = (corpora / name).read_bytes()
    for folder in (env, cache):
        (folder / name).parent.mkdir(parents=True)
        (folder / name).write_bytes(data)
    flag.mkdir()
    monkeypatch.setenv(sources.ENV_SOURCES, str(env))
    resolver = SourceResolver(flag, cache_dir=cache, download=False)
    assert resolver.path(name) == env / name  # not in the flag folder: the environment's
    (flag / name).parent.mkdir(parents=True)
    (flag / name).write_bytes(data)
    assert SourceResolver(flag, cache_dir=cache, download=False).path(name) == flag / name
    monkeypatch.delenv(sources.ENV_SOURCES)
    assert SourceResolver(None, cache_dir=cache, download=False).path(name) == cache / name


def test_checksum_mismatch_is_an_error(tmp_path):
    name = "becel/wic/semantic.tsv"
    (tmp_path / name).parent.mkdir(parents=True)
    (tmp_path / name).write_text("not the file")
    with pytest.raises(SourceError, match="does not match the pinned f6532f8e"):
        SourceResolver(tmp_path, cache_dir=tmp_path / "c", download=False).path(name)


def test_missing_file_says_how_to_point_at_a_mirror(tmp_path):
    resolver = SourceResolver(tmp_path, cache_dir=tmp_path / "c", download=False)
    with pytest.raises(SourceUnavailableError) as info:
        resolver.path("becel/snli/test.tsv")
    message = str(info.value)
    assert "'becel/snli/test.tsv'" in message and "--sources DIR" in message
    assert "CONSISTENCY_BENCH_SOURCES" in message and "raw.githubusercontent.com" in message


def test_unknown_source_file_suggests_names(tmp_path):
    with pytest.raises(KeyError, match=r"Did you mean: becel/snli/test\.tsv"):
        SourceResolver(tmp_path, cache_dir=tmp_path).path("becel/snli/tests.tsv")


def test_missing_sources_directory(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        SourceResolver(tmp_path / "nope")


@pytest.fixture
def server(tmp_path):
    """A file server on 127.0.0.1 standing in for the public hosts."""
    root = tmp_path / "www"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _register(request, source: SourceFile) -> None:
    """Register ``source`` for one test; the finalizer takes it out of the registry again."""
    SOURCES.register(source.path, source)
    request.addfinalizer(lambda: SOURCES.unregister(source.path))


def test_download_verifies_then_caches(server, tmp_path, request):
    root, url = server
    payload = b"premise\thypothesis\tlabel\n"
    (root / "f.tsv").write_bytes(payload)
    md5 = hashlib.md5(payload).hexdigest()
    _register(request, SourceFile("test/f.tsv", md5, f"{url}/f.tsv"))
    cache = tmp_path / "cache"
    got = SourceResolver(None, cache_dir=cache).path("test/f.tsv")
    assert got == cache / "test/f.tsv" and got.read_bytes() == payload
    (root / "f.tsv").unlink()  # second time from the cache, no network
    assert SourceResolver(None, cache_dir=cache, download=False).path("test/f.tsv") == got


def test_download_from_a_zip_member(server, tmp_path, request):
    root, url = server
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("train/train.gold.txt", "T\nF\n")
    (root / "a.zip").write_bytes(buffer.getvalue())
    md5 = hashlib.md5(b"T\nF\n").hexdigest()
    _register(
        request, SourceFile("z/train.gold.txt", md5, f"{url}/a.zip", "train/train.gold.txt")
    )
    path = SourceResolver(None, cache_dir=tmp_path).path("z/train.gold.txt")
    assert path.read_text() == "T\nF\n"


def test_corrupt_download_is_not_cached(server, tmp_path, request):
    root, url = server
    (root / "f.tsv").write_bytes(b"tampered")
    _register(request, SourceFile("test/f.tsv", "0" * 32, f"{url}/f.tsv"))
    with pytest.raises(SourceError, match="nothing was cached"):
        SourceResolver(None, cache_dir=tmp_path / "cache").path("test/f.tsv")
    assert not (tmp_path / "cache" / "test" / "f.tsv").exists()


def test_unreachable_host_names_the_file_and_the_mirror(server, tmp_path, request):
    _, url = server
    _register(request, SourceFile("test/gone.tsv", "0" * 32, f"{url}/gone.tsv"))
    with pytest.raises(SourceUnavailableError, match="download failed: HTTP Error 404") as info:
        SourceResolver(None, cache_dir=tmp_path).path("test/gone.tsv")
    assert "--sources DIR" in str(info.value)
