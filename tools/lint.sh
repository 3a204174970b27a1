#!/usr/bin/env bash
# The style checks `make test` runs first (`make lint`): the tree must be exactly what `make format`
# writes, so a diff never mixes a change with reformatting. Each failure names the files and the fix.
set -uo pipefail
cd "$(dirname "$0")/.."
step() { printf '\033[1m[lint]\033[0m %s\n' "$*"; }
failed=0

mapfile -t cpp < <(find src bindings tests bench -name '*.cpp' -o -name '*.hpp' | sort)
step "clang-format --dry-run over ${#cpp[@]} C++ files"
off=()
for f in "${cpp[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || off+=("$f")
done
if [ ${#off[@]} -gt 0 ]; then
  printf '  not formatted: %s\n' "${off[@]}"
  echo "  fix: run 'make format' and commit the result (.clang-format holds the style)"
  failed=1
fi

step "prettier --check over web/, tests/ and bench/"
if ! node_modules/.bin/prettier --log-level warn --check 'web/**/*.{js,mjs,ts}' 'tests/**/*.mjs' 'bench/**/*.mjs'; then
  echo "  fix: run 'make format' and commit the result (.prettierrc.json holds the style)"
  failed=1
fi

exit $failed
