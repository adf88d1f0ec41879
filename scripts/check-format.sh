#!/usr/bin/env bash
# Fails when a C++ file of the repository is not laid out as .clang-format
# says, naming the file and line; `make format` rewrites them. Part of
# `make test`, so the style is checked, not hoped for.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -- include src tests bench examples python/src |
                     grep -E '\.(h|cc)$')
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "check-format: run 'make format' (clang-format $(clang-format --version | grep -oE '[0-9]+\.[0-9.]+' | head -1)) and commit the result" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"
