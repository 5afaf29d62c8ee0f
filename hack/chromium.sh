#!/usr/bin/env bash
# Installs Debian's Chromium (headless, for the console's browser tests)
# when it is missing; prints its path. Debian's packages only.
set -euo pipefail
for c in chromium chromium-browser; do
	if p=$(command -v "$c"); then
		echo "$p"
		exit 0
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
command -v chromium
