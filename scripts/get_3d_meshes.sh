#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Piece meshes for scripts/render_3d.py, from two Debian packages (both GPL):
#   brutalchess      -> OUT/brutal/{pawn,knight,bishop,rook,queen,king}.obj
#   dreamchess-data  -> OUT/dc-classic/*.dcm, OUT/dc-elements/*.dcm
# Usage: scripts/get_3d_meshes.sh work-tmp/meshes
set -eu
out=${1:?usage: get_3d_meshes.sh OUTDIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download brutalchess dreamchess-data >/dev/null)
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/x"; done
mkdir -p "$out"
rm -rf "$out/brutal" "$out/dc-classic" "$out/dc-elements"
cp -r "$tmp/x/usr/share/games/brutalchess/models" "$out/brutal"
cp -r "$tmp/x/usr/share/games/dreamchess/pieces/classic" "$out/dc-classic"
cp -r "$tmp/x/usr/share/games/dreamchess/pieces/elements" "$out/dc-elements"
echo "meshes in $out"
