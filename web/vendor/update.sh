#!/bin/sh
# update.sh — fetches three.js and @pixiv/three-vrm from npm at the pinned
# versions below and writes the ES modules the page's VRM avatar imports
# (and only those) with their licences into web/static/app/vendor/. Each
# module is minified on its own (esbuild, no bundling), and the bare
# specifier 'three' is rewritten to the vendored file's relative path, so
# the browser loads them from the daemon as they are: no import map, no
# build step at run time, no other site. Needs npm (and npx) on the PATH;
# run it from anywhere, then commit what changed.
#
#   THREE=0.187.0 VRM=3.5.5 web/vendor/update.sh
set -eu

THREE=${THREE:-0.187.0}
VRM=${VRM:-3.5.5}
ESBUILD=${ESBUILD:-0.25.0}

here=$(cd "$(dirname "$0")" && pwd)
out="$here/../static/app/vendor"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$tmp"
npm pack --silent "three@$THREE" "@pixiv/three-vrm@$VRM" >/dev/null
mkdir three vrm
tar xzf "three-$THREE.tgz" -C three --strip-components=1
tar xzf "pixiv-three-vrm-$VRM.tgz" -C vrm --strip-components=1

rm -rf "$out"
mkdir -p "$out/three/addons/loaders" "$out/three/addons/utils" "$out/three-vrm"

# min SRC DST REL: minifies SRC into DST, 'three' imported as REL.
min() {
	npx --yes "esbuild@$ESBUILD" "$1" --minify --format=esm --log-level=warning \
		--legal-comments=inline --outfile="$tmp/min.js"
	sed -e "s#from\"three\"#from\"$3\"#g" -e "s#from'three'#from'$3'#g" "$tmp/min.js" >"$2"
	if grep -q "from\"three/\|from'three/\|import(\"three\|from\"https:\|import\"https:" "$2"; then
		echo "update.sh: $2 still imports a bare or remote module" >&2
		exit 1
	fi
}

min three/build/three.core.js "$out/three/three.core.js" ./three.module.js
min three/build/three.module.js "$out/three/three.module.js" ./three.module.js
# GLTFLoader and what it imports: three-vrm's loader plugin needs them.
min three/examples/jsm/loaders/GLTFLoader.js "$out/three/addons/loaders/GLTFLoader.js" ../../three.module.js
min three/examples/jsm/utils/BufferGeometryUtils.js "$out/three/addons/utils/BufferGeometryUtils.js" ../../three.module.js
min three/examples/jsm/utils/SkeletonUtils.js "$out/three/addons/utils/SkeletonUtils.js" ../../three.module.js
min vrm/lib/three-vrm.module.js "$out/three-vrm/three-vrm.module.js" ../three/three.module.js

cp three/LICENSE "$out/three/LICENSE"
cp vrm/LICENSE "$out/three-vrm/LICENSE"
printf 'three %s\n@pixiv/three-vrm %s\n' "$THREE" "$VRM" >"$out/VERSIONS"
du -ab "$out" | sort -k2
