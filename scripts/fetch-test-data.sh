#!/usr/bin/env bash
# scripts/fetch-test-data.sh [DIR]: assemble the real images and the real
# volume that vlec's image and volume benchmarks run on, from public Debian
# and PyPI packages (nothing is committed to the repository):
#
#  - Debian libjxl-testdata (the JPEG XL conformance images): the "flower"
#    photograph (2268x1512, RGB and gray, 8-bit), three 500x500 photographs
#    and one grayscale photograph from wesaturate, and hdr_room (676x449, a
#    16-bit RGB HDR photograph);
#  - PyPI scikit-image's bundled photographs: astronaut, camera, coffee,
#    chelsea, motorcycle_left (8-bit), and the brick/grass/gravel textures;
#  - PyPI pydicom's test files: examples_overlay.dcm, a 484x300 MR slice with
#    12 significant bits (written as a 16-bit PGM, maxval 4095);
#  - PyPI nilearn's MNI ICBM152 2009a T1 template: a real MRI brain volume,
#    197x233x189 u8, 78 % zero (skull-stripped), written raw as
#    volumes/mni152_t1_197x233x189.u8.
#
# Images go to DIR/images as PGM/PPM (P5/P6; 16-bit samples big-endian as
# netpbm writes them). DIR defaults to $VLEC_DATA_DIR or /tmp/vlec-data.
# Needs network access to Debian's and PyPI's mirrors; idempotent.
set -euo pipefail
dir=${1:-${VLEC_DATA_DIR:-/tmp/vlec-data}}
mkdir -p "$dir/images" "$dir/volumes" "$dir/download"
cd "$dir/download"

export DEBIAN_FRONTEND=noninteractive
need=()
for p in netpbm python3-pip; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || { apt-get update -qq; apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
pip_flags=(--quiet)
python3 -m pip install --help | grep -q -- --break-system-packages && pip_flags+=(--break-system-packages)
python3 -c "import numpy, PIL, pydicom" 2>/dev/null || python3 -m pip install "${pip_flags[@]}" numpy pillow pydicom

ls libjxl-testdata_*.deb >/dev/null 2>&1 || apt-get download libjxl-testdata >/dev/null
[ -d jxl ] || dpkg -x libjxl-testdata_*.deb jxl
ls scikit_image-*.whl >/dev/null 2>&1 ||
  python3 -m pip download --quiet --no-deps --only-binary=:all: scikit-image==0.26.0 -d .
ls nilearn-*.whl >/dev/null 2>&1 || python3 -m pip download --quiet --no-deps nilearn==0.14.1 -d .

jxl=jxl/usr/share/libjxl-testdata
cp "$jxl/jxl/flower/flower.pnm" "$dir/images/flower.ppm"
cp "$jxl/jxl/flower/flower.pgm" "$dir/images/flower.pgm"
for f in cvo9xd_keong_macan_srgb8 tmshre_riaphotographs_srgb8 u76c0g_bliznaca_srgb8 cvo9xd_keong_macan_grayscale; do
  pngtopnm "$jxl/external/wesaturate/500px/$f.png" >"$dir/images/$f.pnm" 2>/dev/null
done
pngtopnm "$jxl/jxl/hdr_room.png" >"$dir/images/hdr_room16.ppm" 2>/dev/null

python3 - "$dir" <<'EOF'
import glob, gzip, io, os, struct, sys, zipfile
import numpy as np
from PIL import Image
import pydicom
out = sys.argv[1]

def write_pnm(path, a, maxval):
    planes = 1 if a.ndim == 2 else a.shape[2]
    h, w = a.shape[:2]
    head = b'P%d\n%d %d\n%d\n' % (5 if planes == 1 else 6, w, h, maxval)
    data = a.astype('>u2' if maxval > 255 else 'u1').tobytes()
    with open(path, 'wb') as f:
        f.write(head + data)

sk = zipfile.ZipFile(glob.glob('scikit_image-*.whl')[0])
for name in ['astronaut', 'camera', 'coffee', 'chelsea', 'motorcycle_left', 'brick', 'grass', 'gravel']:
    im = Image.open(io.BytesIO(sk.read('skimage/data/%s.png' % name)))
    im = im.convert('L' if im.mode in ('L', 'P', 'LA', 'I') and name in ('camera', 'brick', 'grass', 'gravel') else 'RGB')
    a = np.asarray(im)
    write_pnm(os.path.join(out, 'images', 'skimage_%s.%s' % (name, 'pgm' if a.ndim == 2 else 'ppm')), a, 255)

ds = pydicom.dcmread(os.path.join(os.path.dirname(pydicom.__file__), 'data', 'test_files', 'examples_overlay.dcm'))
a = ds.pixel_array.astype(np.uint16)
write_pnm(os.path.join(out, 'images', 'mr_overlay12.pgm'), a, (1 << int(ds.BitsStored)) - 1)

nl = zipfile.ZipFile(glob.glob('nilearn-*.whl')[0])
b = gzip.decompress(nl.read('nilearn/datasets/data/mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz'))
dim = struct.unpack('<8h', b[40:56])
datatype = struct.unpack('<h', b[70:72])[0]
offset = int(struct.unpack('<f', b[108:112])[0])
assert datatype == 2 and dim[0] == 3, (datatype, dim)
n = dim[1] * dim[2] * dim[3]
vol = np.frombuffer(b[offset:offset + n], dtype=np.uint8)
vol.tofile(os.path.join(out, 'volumes', 'mni152_t1_%dx%dx%d.u8' % (dim[1], dim[2], dim[3])))
EOF
ls -la "$dir/images" "$dir/volumes"
