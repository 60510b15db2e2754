#!/usr/bin/env bash
# ci/nightly/report-check.sh - renders a nightly report page in a real headless
# Chromium and checks that it shows data, not only that the file exists.
#
#   ci/nightly/report-check.sh PAGE.html [--png FILE] [--min-plots N] [--min-findings N]
#                      [--min-stress N] [-h|--help]
#
#   --png FILE        keep the screenshot (1200x2400) there (default: a
#                     temporary file, removed)
#   --min-plots N     plots the browser must have drawn with a non-empty
#                     series or bar (default 1)
#   --min-findings N  rows in the findings table (default 0)
#   --min-stress N    rows in the stress table (default 0)
#   --min-links N     links the page must hold (default 0); every link is
#                     followed either way
#   --min-new N       findings marked new (default 0)
#
# Checks: the page loads nothing from the network (no http(s) URL in src,
# href or url()); in the DOM Chromium dumps after layout, the page's own
# script counted >= N plots whose polylines/bars have a non-empty bounding
# box (only a browser that laid the SVG out can write that number); the
# table rows; every link (a relative href: logs, crash files, coverage
# pages, stress JSON) leads to a file that exists; the screenshot is a PNG of the window's size, mostly not
# blank, and shows at least 3 of the plot palette's colours.
# Chromium: $CHROMIUM, else /usr/bin/chromium.  Exit status: 0 checked,
# 1 a check failed, 2 bad usage, 77 no Chromium (ctest SKIP_RETURN_CODE).
set -euo pipefail
. "$(dirname "$0")/../lib/usage.sh"
page="" png="" min_plots=1 min_findings=0 min_stress=0 min_links=0 min_new=0
num() { [[ "$2" =~ ^[0-9]+$ ]] || kmgr_die "$1: a whole number"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--png) [ $# -ge 2 ] || kmgr_die "--png needs a file"; png=$2; shift 2 ;;
	--min-plots) [ $# -ge 2 ] || kmgr_die "--min-plots needs N"; num "$1" "$2"; min_plots=$2; shift 2 ;;
	--min-findings) [ $# -ge 2 ] || kmgr_die "--min-findings needs N"; num "$1" "$2"; min_findings=$2; shift 2 ;;
	--min-stress) [ $# -ge 2 ] || kmgr_die "--min-stress needs N"; num "$1" "$2"; min_stress=$2; shift 2 ;;
	--min-links) [ $# -ge 2 ] || kmgr_die "--min-links needs N"; num "$1" "$2"; min_links=$2; shift 2 ;;
	--min-new) [ $# -ge 2 ] || kmgr_die "--min-new needs N"; num "$1" "$2"; min_new=$2; shift 2 ;;
	-h | --help) kmgr_usage; exit 0 ;;
	-*) kmgr_die "unknown option '$1'" ;;
	*) [ -z "$page" ] || kmgr_die "one page only"; page=$1; shift ;;
	esac
done
[ -n "$page" ] || kmgr_die "which page?"
[ -f "$page" ] || kmgr_die "$page: no such file"
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
	echo "report-check.sh: SKIP: no Chromium at $chromium (ci/deps.sh installs it)"
	exit 77
fi
page=$(cd "$(dirname "$page")" && pwd)/$(basename "$page")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$png" ] || png=$tmp/shot.png
rm -f "$png"
fail=0
bad() { echo "report-check.sh: FAIL: $*" >&2; fail=1; }

# One fresh profile per run; nothing that phones home.
chrome() {
	local prof
	prof=$(mktemp -d "$tmp/profile.XXXXXX")
	timeout -s KILL 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --disable-extensions --hide-scrollbars --user-data-dir="$prof" \
		--window-size=1200,2400 "$@" "file://$page" 2>"$tmp/chrome.err"
}

if grep -Eiq '(src|href)=["'\'']?(https?:)?//|url\((["'\''])?(https?:)?//|<link ' "$page"; then
	bad "the page refers to a network resource (not self-contained)"
fi
# One start of Chromium for both (~3 CPU-s each): the DOM after layout on
# stdout, the screenshot of the same page to the file.
chrome --virtual-time-budget=5000 --dump-dom --screenshot="$png" >"$tmp/dom.html" || {
	bad "chromium --dump-dom --screenshot failed: $(tail -3 "$tmp/chrome.err")"
	exit 1
}
drawn=$(grep -oE 'data-plots-drawn="[0-9]+"' "$tmp/dom.html" | grep -oE '[0-9]+' || echo 0)
marks=$(grep -oE 'data-marks-drawn="[0-9]+"' "$tmp/dom.html" | grep -oE '[0-9]+' || echo 0)
count() { { grep -oE "$1" "$tmp/dom.html" || true; } | wc -l; }
plots=$(count '<svg class="plot"')
findings=$(count '<tr class="finding[" ]')
stress=$(count '<tr class="stress-row"')
new=$(count '<td class="new">new</td>')
echo "report-check.sh: DOM: $plots plot(s), $drawn drawn by the browser ($marks marks)," \
	"$findings finding row(s) ($new new), $stress stress row(s)"
[ "$new" -ge "$min_new" ] || bad "$new finding(s) marked new, want >= $min_new"
# Follow every link of the dumped DOM: it must lead to a file (or a folder)
# that exists, relative to the page.
links=$(python3 - "$tmp/dom.html" "$(dirname "$page")" <<'PY'
import html.parser, os, sys, urllib.parse
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []
    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]
p = P()
p.feed(open(sys.argv[1], errors="replace").read())
n = 0
for h in p.hrefs:
    if h.startswith("#"):
        continue
    u = urllib.parse.urlsplit(h)
    path = urllib.parse.unquote(u.path)
    if u.scheme not in ("", "file"):
        print("report-check.sh: FAIL: link %s is not to a local file" % h, file=sys.stderr)
        continue
    full = path if os.path.isabs(path) else os.path.join(sys.argv[2], path)
    if not os.path.exists(full):
        print("report-check.sh: FAIL: link %s leads nowhere (%s)" % (h, full), file=sys.stderr)
        continue
    n += 1
print(n, len([h for h in p.hrefs if not h.startswith("#")]))
PY
)
read -r links_ok links_all <<<"$links"
echo "report-check.sh: links: $links_ok of $links_all lead to a file"
[ "$links_ok" = "$links_all" ] || bad "$((links_all - links_ok)) broken link(s)"
[ "$links_all" -ge "$min_links" ] || bad "$links_all link(s), want >= $min_links"
[ "$drawn" -ge "$min_plots" ] || bad "$drawn plot(s) drawn, want >= $min_plots"
[ "$drawn" -le "$plots" ] || bad "more plots drawn ($drawn) than in the page ($plots)"
[ "$findings" -ge "$min_findings" ] || bad "$findings finding row(s), want >= $min_findings"
[ "$stress" -ge "$min_stress" ] || bad "$stress stress row(s), want >= $min_stress"

[ -s "$png" ] || { bad "no screenshot written"; exit 1; }
python3 - "$png" <<'PY' || fail=1
# PNG decoding, standard library only: the picture must be the window's
# size, not blank, and show the plots' colours.
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(print("report-check.sh: FAIL: not a PNG", file=sys.stderr) or 1)
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if typ == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif typ == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = hdr
if depth != 8 or ctype not in (2, 6) or interlace:
    sys.exit(print("report-check.sh: FAIL: unexpected PNG format %r" % (hdr,), file=sys.stderr) or 1)
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
LO, HI = int.from_bytes(b"\x7f" * stride, "big"), int.from_bytes(b"\x80" * stride, "big")


def add_bytes(x, y):
    """x + y byte by byte, modulo 256, on whole rows at once (SWAR)."""
    a, b = int.from_bytes(x, "big"), int.from_bytes(y, "big")
    return bytearray((((a & LO) + (b & LO)) ^ ((a ^ b) & HI)).to_bytes(stride, "big"))


def unfilter(raw, h, stride, bpp):
    """The pixels, each row's filter undone.  A function, not module code,
    with the sizes as arguments: its loops then run on local variables,
    ~5x faster (4.2 -> 0.8 CPU-s)."""
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f == 2:  # up
            line = add_bytes(line, prev)
        elif f == 1:  # sub
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif f == 3:  # average
            for x in range(bpp):
                line[x] = (line[x] + prev[x] // 2) & 255
            for x in range(bpp, stride):
                line[x] = (line[x] + ((line[x - bpp] + prev[x]) >> 1)) & 255
        elif f == 4:  # Paeth: left a, up b, up-left c; p = a + b - c
            for x in range(bpp):
                line[x] = (line[x] + prev[x]) & 255
            for x in range(bpp, stride):
                a, b, c = line[x - bpp], prev[x], prev[x - bpp]
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - c - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return b"".join(bytes(r) for r in rows)


pix = unfilter(raw, h, stride, bpp)
if bpp == 4:  # drop alpha
    rgb = bytearray(w * h * 3)
    rgb[0::3], rgb[1::3], rgb[2::3] = pix[0::4], pix[1::4], pix[2::4]
    pix = bytes(rgb)
is255 = bytes(1 if v == 255 else 0 for v in range(256))
white = (int.from_bytes(pix[0::3].translate(is255), "big") &
         int.from_bytes(pix[1::3].translate(is255), "big") &
         int.from_bytes(pix[2::3].translate(is255), "big"))
ink = w * h - bin(white).count("1")
palette = [bytes.fromhex(c) for c in ("1f77b4", "d62728", "2ca02c", "ff7f0e", "9467bd",
                                      "8c564b", "e377c2", "17becf")]
seen = 0
for c in palette:
    j = pix.find(c)
    while j >= 0 and j % 3:
        j = pix.find(c, j + 1)
    seen += j >= 0
frac = ink / float(w * h)
print("report-check.sh: screenshot %dx%d, %.1f%% not white, %d plot colour(s)"
      % (w, h, 100 * frac, seen))
ok = True
if (w, h) != (1200, 2400):
    print("report-check.sh: FAIL: screenshot is %dx%d, not 1200x2400" % (w, h), file=sys.stderr)
    ok = False
if frac < 0.02:
    print("report-check.sh: FAIL: the screenshot is blank", file=sys.stderr)
    ok = False
if seen < 3:
    print("report-check.sh: FAIL: %d plot colour(s) on screen, want >= 3" % seen, file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
PY
[ "$fail" = 0 ] || exit 1
echo "report-check.sh: OK: $page renders with data (screenshot: $png)"
