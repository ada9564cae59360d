"""The endpoint of a served run: its base URL, the served model name and the key.

The key is read from an environment variable and kept only in memory: it is never printed,
logged, cached or written (``Endpoint.__repr__`` hides it; the cache is keyed on the URL,
the model and the request body, which do not hold it).
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from consistency_bench.bench.errors import ConfigError

#: Host names that are this machine (``http://`` to them is allowed without a flag).
LOCAL_HOSTS = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_local(host: str) -> bool:
    """Whether ``host`` names this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.lower() in LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_base_url(url: str, allow_insecure: bool = False) -> str:
    """``url`` without a trailing slash, checked.

    Raises:
        ConfigError: Not an http(s) URL with a host; a non-local ``http://`` URL without
            ``allow_insecure`` (the key and the prompts would cross the network in clear).

    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--base-url {url!r}: expected http(s)://HOST[:PORT]/v1")
    if parts.query or parts.fragment:
        raise ConfigError(f"--base-url {url!r}: no query or fragment; expected "
                          "http(s)://HOST[:PORT]/v1")
    if parts.username or parts.password:
        raise ConfigError("--base-url: credentials in the URL are refused; pass the key "
                          "through --api-key-env")
    if parts.scheme == "http" and not is_local(parts.hostname) and not allow_insecure:
        raise ConfigError(f"--base-url {url}: plain http:// to another machine sends the key "
                          "and the prompts unencrypted; use https:// or pass --allow-insecure")
    return url.rstrip("/")


@dataclass(frozen=True)
class Endpoint:
    """Where requests go and how they are authorised.

    Attributes:
        base_url: The API root, e.g. ``http://localhost:8000/v1``.
        model: The served model name (``model`` of every request).
        key: The API key, or None (no ``Authorization`` header). Never shown.
        key_env: The variable the key was read from (for messages).

    """

    base_url: str
    model: str
    key: str | None = field(default=None, repr=False)
    key_env: str = "OPENAI_API_KEY"

    @property
    def host(self) -> str:
        """``scheme://host[:port]``: what the run record keeps of the URL."""
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.netloc}"

    def url(self, path: str) -> str:
        """The URL of ``path`` (``/completions``, ``/chat/completions``, ``/models``)."""
        return self.base_url + path

    def headers(self) -> dict[str, str]:
        """Request headers (the key as a bearer token, where there is one)."""
        out = {"Content-Type": "application/json"}
        if self.key:
            out["Authorization"] = f"Bearer {self.key}"
        return out

    def redact(self, text: str) -> str:
        """``text`` with the key replaced (for server messages echoed in errors)."""
        return text.replace(self.key, "***") if self.key else text


def make_endpoint(base_url: str, model: str, key_env: str = "OPENAI_API_KEY",
                  allow_insecure: bool = False) -> Endpoint:
    """The endpoint of a run: the URL checked, the key read from ``key_env`` (may be unset).

    Raises:
        ConfigError: A bad URL (see :func:`check_base_url`) or an empty model name.

    """
    if not model.strip():
        raise ConfigError("--model: the served model name is empty")
    if not key_env or not key_env.replace("_", "").isalnum():
        raise ConfigError(f"--api-key-env {key_env!r}: expected an environment variable name")
    key = os.environ.get(key_env) or None
    return Endpoint(check_base_url(base_url, allow_insecure), model, key, key_env)
