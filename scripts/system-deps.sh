#!/usr/bin/env bash
# System packages the tests need (Debian). Each feature adds its packages to PACKAGES with a
# comment saying why. Safe to re-run; skipped when nothing is missing.
set -euo pipefail
PACKAGES=(
  chromium  # headless browser: tests/test_leaderboard_render.py checks the leaderboard HTML page
  # WordNet 3.0 database files: the antonym fallback of `generate` (builders/generate/antonyms.py)
  # reads them through NLTK; scripts/data-deps.sh copies them into .venv/nltk_data.
  wordnet-base
  # index.sense of WordNet 3.0 (NLTK's sense-key lookups need it).
  wordnet-sense-index
)
missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
