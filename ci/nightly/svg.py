"""ci/nightly/svg.py - the nightly report's plots, inline SVG with no library:
lines over time, bars, a latency histogram."""
import html
import math

from nightly.collect import TARGETS

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
          "#17becf", "#7f7f7f", "#bcbd22")

# ------------------------------------------------------------------ plots

def color_of(name, i):
    """A target keeps its colour on every plot of the page."""
    base = name.split("/")[0].split(" (")[0].rstrip("'")
    if base in TARGETS:
        # a second preset of the same target: the palette's other half
        other = " (" in name and not name.endswith(" (asan)")
        return COLORS[(TARGETS.index(base) + (len(TARGETS) if other else 0)) % len(COLORS)]
    return COLORS[(i + len(TARGETS)) % len(COLORS)] if i < len(COLORS) - len(TARGETS) \
        else COLORS[i % len(COLORS)]


def nice_ticks(lo, hi, n=5):
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw), default=10 * mag)
    start = math.floor(lo / step) * step
    ticks, v = [], start
    while v <= hi + step * 0.5:
        ticks.append(v)
        v += step
    return ticks


def fmt(v):
    """One number format on the whole page: 12, 12.3, 4090, 12.4k, 1.34M,
    2.1G; never an exponent (4.09e+03)."""
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1e4:
        # the unit that keeps the figure under 1000 ("%.3g" of 10..999.5
        # has no exponent)
        for unit, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")):
            if a / unit < 999.5:
                return "%.3g%s" % (v / unit, suffix)
        return "%.3gT" % (v / 1e12)
    if a == int(a) or a >= 1000:
        return "%d" % round(v)
    if a < 0.001:
        return "0" if a == 0 else "<0.001"
    return "%.3g" % v


def svg_frame(w, h, title, xlabel, ylabel, kind, nseries, npoints, body):
    return ('<svg class="plot" data-kind="%s" data-series="%d" data-points="%d" '
            'xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'role="img" aria-label="%s"><rect width="100%%" height="100%%" fill="#fff"/>'
            '<text x="%d" y="16" text-anchor="middle" font-size="13" font-weight="bold">%s</text>'
            '<text x="%d" y="%d" text-anchor="middle" font-size="11">%s</text>'
            '<text x="12" y="%d" font-size="11" transform="rotate(-90 12 %d)" '
            'text-anchor="middle">%s</text>%s</svg>' % (
                kind, nseries, npoints, w, h, w, h, html.escape(title), w // 2, html.escape(title),
                w // 2, h - 4, html.escape(xlabel), h // 2, h // 2, html.escape(ylabel), body))


def line_plot(title, series, xlabel, ylabel, w=380, h=210, xcat=None, logy=False, zero=True):
    """series: [(name, [(x, y), ...])]; xcat: category labels for x = 0..n-1;
    logy: a log10 y axis (figures orders of magnitude apart; y <= 0 dropped);
    zero=False: the y axis spans the data, not from 0 (coverage: a change of
    a few edges in thousands would draw a flat line)."""
    series = [(n, [(x, y) for x, y in pts if x is not None and y is not None])
              for n, pts in series]
    if logy:
        series = [(n, [(x, math.log10(y)) for x, y in pts if y > 0]) for n, pts in series]
        title += " (log scale)"
    series = [(n, pts) for n, pts in series if pts]
    npts = sum(len(p) for _, p in series)
    if not npts:
        return empty_plot(title, "no data")
    L, R, B = 58, 12, 40
    T = 30 + 13 * len(series)  # the legend sits above the plot area, not over it
    h += 13 * max(0, len(series) - 2)
    xs = [x for _, p in series for x, _ in p]
    ys = [y for _, p in series for _, y in p]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if logy:
        yt = list(range(math.floor(min(ys)), max(math.ceil(max(ys)), math.floor(min(ys)) + 1) + 1))
    else:
        lo = min(0, min(ys)) if zero else min(ys)
        yt = nice_ticks(lo, max(ys) if max(ys) > lo else lo + 1)
    y0, y1 = yt[0], yt[-1]
    yfmt = (lambda v: fmt(10 ** v)) if logy else fmt

    def X(x):
        return L + (x - x0) / (x1 - x0) * (w - L - R)

    def Y(y):
        return h - B - (y - y0) / (y1 - y0) * (h - T - B)

    body = []
    for v in yt:
        body.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                    '<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>' % (
                        L, w - R, Y(v), Y(v), L - 4, Y(v) + 3, yfmt(v)))
    if xcat:
        for i, lab in enumerate(xcat):
            body.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>' % (
                X(i), h - B + 14, html.escape(lab)))
    else:
        for v in nice_ticks(x0, x1, 6):
            if x0 <= v <= x1:
                body.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>'
                            % (X(v), h - B + 14, fmt(v)))
    body.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>' % (L, w - R, h - B, h - B))
    body.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>' % (L, L, T, h - B))
    for i, (name, pts) in enumerate(series):
        col = color_of(name, i)
        d = " ".join("%.1f,%.1f" % (X(x), Y(y)) for x, y in pts)
        body.append('<polyline class="series" data-name="%s" data-n="%d" fill="none" '
                    'stroke="%s" stroke-width="2" points="%s"/>' % (
                        html.escape(name), len(pts), col, d))
        if len(pts) <= 40:
            body += ['<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (X(x), Y(y), col)
                     for x, y in pts]
        ly = 22 + 13 * i
        body.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                    '<text x="%d" y="%d" font-size="10">%s (last %s)</text>' % (
                        L + 8, ly, col, L + 22, ly + 9, html.escape(name), yfmt(pts[-1][1])))
    return svg_frame(w, h, title, xlabel, ylabel, "line", len(series), npts, "".join(body))


def bar_plot(title, bars, ylabel, w=380, h=210, logx_labels=False, xlabel="", logy=None):
    """bars: [(label, value)]; logy: a log10 y axis (None: when the values
    are more than 100 times apart, 12.4k beside 1.34M)."""
    bars = [(lab, v) for lab, v in bars if v is not None]
    if not bars:
        return empty_plot(title, "no data")
    pos = [v for _, v in bars if v > 0]
    if logy is None:
        logy = len(pos) >= 2 and max(pos) / min(pos) > 100
    if logy and pos:
        return log_bar_plot(title, bars, ylabel, w, h, logx_labels, xlabel)
    L, R, T, B = 58, 12, 26, 70 if not logx_labels else 40
    yt = nice_ticks(0, max(v for _, v in bars))
    y1 = yt[-1] or 1
    bw = (w - L - R) / len(bars)
    body = []
    for v in yt:
        y = h - B - v / y1 * (h - T - B)
        body.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                    '<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>' % (
                        L, w - R, y, y, L - 4, y + 3, fmt(v)))
    every = max(1, math.ceil(len(bars) / (8 if logx_labels else 12)))
    for i, (lab, v) in enumerate(bars):
        x = L + i * bw
        bh = v / y1 * (h - T - B)
        col = COLORS[0] if logx_labels else COLORS[i % len(COLORS)]
        body.append('<rect class="bar" data-value="%s" x="%.1f" y="%.1f" width="%.1f" '
                    'height="%.1f" fill="%s"><title>%s: %s</title></rect>' % (
                        v, x + bw * 0.1, h - B - bh, max(bw * 0.8, 1), bh, col,
                        html.escape(lab), fmt(v)))
        if i % every == 0:
            if logx_labels:
                body.append('<text x="%.1f" y="%d" font-size="9" text-anchor="middle">%s</text>'
                            % (x + bw / 2, h - B + 12, html.escape(lab)))
            else:
                body.append('<text x="%.1f" y="%d" font-size="10" text-anchor="end" '
                            'transform="rotate(-30 %.1f %d)">%s</text>' % (
                                x + bw / 2, h - B + 12, x + bw / 2, h - B + 12, html.escape(lab)))
    body.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>' % (L, w - R, h - B, h - B))
    return svg_frame(w, h, title, xlabel, ylabel, "bar", 1, len(bars), "".join(body))


def empty_plot(title, why, w=380, h=120):
    return ('<svg class="plot-empty" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">'
            '<rect width="100%%" height="100%%" fill="#f6f6f6"/>'
            '<text x="%d" y="20" text-anchor="middle" font-size="13" font-weight="bold">%s</text>'
            '<text x="%d" y="%d" text-anchor="middle" font-size="12" fill="#888">%s</text></svg>'
            % (w, h, w // 2, html.escape(title), w // 2, h // 2 + 10, html.escape(why)))


def ns_label(ns):
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            return fmt(ns / div) + unit
    return "%dns" % ns


def hist_plot(title, lat):
    """Drain latency: the log-linear buckets folded into powers of two."""
    b = lat.get("buckets") if lat else None
    if not b:
        if lat and lat.get("count"):
            return bar_plot(title + " (percentiles only)",
                            [("p50", lat["p50"] / 1e3), ("p99", lat["p99"] / 1e3),
                             ("max", lat["max"] / 1e3)], "us")
        return empty_plot(title, "no samples")
    folded = {}
    for lo, n in b:
        e = int(math.log2(lo)) if lo > 0 else 0
        folded[e] = folded.get(e, 0) + n
    lo_e, hi_e = min(folded), max(folded)
    bars = [(ns_label(2 ** e), folded.get(e, 0)) for e in range(lo_e, hi_e + 1)]
    return bar_plot(title, bars, "samples", logx_labels=True, xlabel="latency (bucket lower bound)")


def log_bar_plot(title, bars, ylabel, w, h, logx_labels, xlabel):
    """bar_plot on a log10 axis: heights from the decade below the smallest
    value; each bar's own figure is drawn above it."""
    pos = [v for _, v in bars if v > 0]
    d0 = math.floor(math.log10(min(pos)))
    d1 = max(math.ceil(math.log10(max(pos))), d0 + 1)
    L, R, T, B = 58, 12, 26, 70 if not logx_labels else 40
    H = h - T - B

    def Y(v):
        return h - B - (math.log10(v) - d0) / (d1 - d0) * H if v > 0 else h - B

    bw = (w - L - R) / len(bars)
    body = []
    for d in range(d0, d1 + 1):
        body.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                    '<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>' % (
                        L, w - R, Y(10 ** d), Y(10 ** d), L - 4, Y(10 ** d) + 3, fmt(10 ** d)))
    for i, (lab, v) in enumerate(bars):
        x = L + i * bw
        top = Y(v)
        body.append('<rect class="bar" data-value="%s" x="%.1f" y="%.1f" width="%.1f" '
                    'height="%.1f" fill="%s"><title>%s: %s</title></rect>'
                    '<text x="%.1f" y="%.1f" font-size="9" text-anchor="middle">%s</text>' % (
                        v, x + bw * 0.1, top, max(bw * 0.8, 1), h - B - top,
                        COLORS[i % len(COLORS)], html.escape(lab), fmt(v),
                        x + bw / 2, top - 2, fmt(v)))
        body.append('<text x="%.1f" y="%d" font-size="10" text-anchor="end" '
                    'transform="rotate(-30 %.1f %d)">%s</text>' % (
                        x + bw / 2, h - B + 12, x + bw / 2, h - B + 12, html.escape(lab)))
    body.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>' % (L, w - R, h - B, h - B))
    body.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>' % (L, L, T, h - B))
    return svg_frame(w, h, title + " (log scale)", xlabel, ylabel, "bar", 1, len(bars),
                     "".join(body))
