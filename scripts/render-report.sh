#!/usr/bin/env bash
# Renders an autobuild HTML run report (report.html) to a PNG screenshot with headless
# Chromium, so a person (or a review) can see at a glance that it is legible.
#
#   scripts/render-report.sh REPORT.html [OUT.png] [WIDTH] [HEIGHT]
#
# OUT defaults to REPORT.png beside the report; the window is WIDTH x HEIGHT pixels (default
# 1280 x 2000; the page is cut at HEIGHT). The browser runs with networking off, as the report
# needs none.
#
# Skips with a message and exit 0 when no Chromium is installed (`cargo test` never needs
# one); `apt-get install chromium` provides it on Debian. Set CHROMIUM to use another binary.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -f "$1" ]; then
    echo "usage: $0 REPORT.html [OUT.png] [WIDTH] [HEIGHT]" >&2
    exit 2
fi
report=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=${2:-${report%.html}.png}
width=${3:-1280}
height=${4:-2000}

browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
    for candidate in chromium chromium-browser google-chrome; do
        if command -v "$candidate" >/dev/null 2>&1; then
            browser=$(command -v "$candidate")
            break
        fi
    done
fi
if [ -z "$browser" ]; then
    echo "render-report: no Chromium found (chromium, chromium-browser, google-chrome); nothing rendered"
    exit 0
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$profile" --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' \
    --window-size="$width,$height" --screenshot="$out" "file://$report" >/dev/null 2>&1
echo "render-report: $out"
