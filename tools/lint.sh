#!/usr/bin/env bash
# The checks `make test` runs first (`make lint`): the tree is exactly what `make format` writes
# (so a diff never mixes a change with reformatting), eslint's recommended rules hold, and tsc
# --checkJs finds no new type error in web/. Each failure names the files and the fix.
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
if ! node_modules/.bin/prettier --log-level warn --check 'web/**/*.{js,mjs,ts}' 'tests/**/*.mjs' 'bench/**/*.mjs' 'tools/**/*.mjs' '*.js'; then
  echo "  fix: run 'make format' and commit the result (.prettierrc.json holds the style)"
  failed=1
fi

step "eslint over web/, tests/ and bench/ (eslint.config.js)"
if ! node_modules/.bin/eslint --max-warnings 0 web tests bench; then
  echo "  fix: correct the code eslint names (its recommended rules catch bugs, not style)"
  failed=1
fi

step "tsc --checkJs over web/ against its .d.ts (tsconfig.json)"
node tools/typecheck.mjs || failed=1

exit $failed
