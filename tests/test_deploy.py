"""`manage.py check --deploy` with the production settings: the environment alone (no .env file),
DEBUG off, a real secret key. Run as a subprocess, as an operator would."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def check_deploy(tmp_path: Path, **overrides: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SECURE_", "SESSION_", "CSRF_", "DJANGO_")) and key != "PYTEST_CURRENT_TEST"
    }
    env.update(
        ENV_FILE="",  # production reads the environment only; a developer's .env must not leak in
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="annotagent.example.org",
        DATA_DIR=str(tmp_path),
    )
    env.update(overrides)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_the_production_settings(tmp_path):
    result = check_deploy(tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def test_check_deploy_is_clean_behind_a_tls_proxy(tmp_path):
    result = check_deploy(tmp_path, SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https")
    assert result.returncode == 0, result.stderr + result.stdout


def test_the_plain_http_demo_turns_https_off_and_check_deploy_says_so(tmp_path):
    result = check_deploy(
        tmp_path,
        SECURE_SSL_REDIRECT="false",
        SESSION_COOKIE_SECURE="false",
        CSRF_COOKIE_SECURE="false",
        SECURE_HSTS_SECONDS="0",
    )
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


def test_a_malformed_proxy_ssl_header_is_refused_clearly(tmp_path):
    result = check_deploy(tmp_path, SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO")
    assert result.returncode != 0
    assert "SECURE_PROXY_SSL_HEADER must be HEADER,VALUE" in result.stderr


def test_a_claim_too_short_to_renew_is_refused_clearly(tmp_path):
    result = check_deploy(tmp_path, INDEX_CLAIM_SECONDS="1")
    assert result.returncode != 0
    assert "INDEX_CLAIM_SECONDS must be at least 3." in result.stderr
