#!/usr/bin/env python3
"""Checks `turbanet report` pages in a real browser (Debian's headless Chromium through
Selenium), the way a user opens them: offline, from a file:// URL.

Each page must
  * reference nothing outside itself: no src/href other than #fragments and data: URIs, no
    CSS @import, no url() other than url(#id) and data: (read from the HTML source, with line);
  * load no other file or URL in the browser either (requests from scripts included: the
    page is opened alone in an empty directory, every network request goes to a dead proxy,
    and any request other than the page itself fails the check);
  * log no console error and throw no uncaught exception (any SEVERE browser log entry), and
    finish loading within --load-seconds (a page that does not is failed, and the next page
    gets a new browser);
  * have at least one <section class="tn-section" id="sec-NAME">, and in each a visible,
    non-empty <h2>, and below it something drawn: the section's screenshot (and that of each
    <svg>, <img> and <canvas> in it) is not one single colour and not zero-sized. An SVG
    that failed to render leaves its box blank;
  * draw every SVG element in the colour its fill attribute gives: a CSS rule overrides such
    an attribute (light labels on dark heat-map cells once came out dark grey).

Prints one line per section ("ok" or the reason) and one per page-wide failure, each starting
with the page's file name; exits 0 when every page passes, 1 when any fails, 3 when the
browser cannot be started here (the message says what to install).

    /usr/bin/python3 scripts/check_report.py run.html
    /usr/bin/python3 scripts/check_report.py run.html --screenshots shots/   # shots/run-sec-NAME.png
    /usr/bin/python3 scripts/check_report.py run.html --width 400   # as a phone lays it out

Needs chromium, chromium-driver, python3-selenium and python3-pil (scripts/install-deps.sh).
"""
import argparse
import base64
import html.parser
import io
import json
import os
import re
import shutil
import sys
import tempfile

UNAVAILABLE = 3  # exit code: no browser here (the tests say SKIPPED)

# Attributes that load or link to another resource.
URL_ATTRIBUTES = {"src", "href", "xlink:href", "srcset", "data", "poster", "action", "formaction",
                  "background", "manifest", "ping", "longdesc", "cite", "codebase", "archive"}
CSS_URL = re.compile(r"url\(\s*(['\"]?)(.*?)\1\s*\)", re.IGNORECASE)
CSS_IMPORT = re.compile(r"@import\b", re.IGNORECASE)
REFRESH = re.compile(r"url\s*=", re.IGNORECASE)


def inside(value):
    """Whether a URL value stays inside the page: empty, a #fragment or a data: URI."""
    v = value.strip()
    return v == "" or v.startswith("#") or v.lower().startswith("data:")


class ReferenceFinder(html.parser.HTMLParser):
    """Collects (line, what) for every reference to something outside the page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []
        self.in_style = False

    def css(self, text, where):
        line = self.getpos()[0]
        if CSS_IMPORT.search(text):
            self.found.append((line, f"@import in {where}"))
        for m in CSS_URL.finditer(text):
            if not inside(m.group(2)):
                self.found.append((line, f"url({m.group(2)}) in {where}"))

    def handle_starttag(self, tag, attrs):
        line = self.getpos()[0]
        for name, value in attrs:
            if value is None:
                continue
            if name in URL_ATTRIBUTES and not inside(value):
                self.found.append((line, f'<{tag} {name}="{value}">'))
            elif name == "style" or "url(" in value.lower():
                self.css(value, f"<{tag} {name}>")
            elif tag == "meta" and name == "content" and REFRESH.search(value):
                self.found.append((line, f'<meta content="{value}"> (a redirect)'))
        self.in_style = tag == "style"

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.in_style = False

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.css(data, "<style>")


def external_references(text):
    """Lines 'line N: what' for each reference outside the page in the HTML source `text`."""
    finder = ReferenceFinder()
    finder.feed(text)
    finder.close()
    return [f"line {line}: {what}" for line, what in finder.found]


def colours(png, box=None):
    """The number of distinct colours (up to 2) of PNG bytes, cropped to box (l, t, r, b)."""
    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("RGB")
    if box is not None:  # clipped to the image: crop() pads outside it with black
        l, t, r, b = box
        image = image.crop((max(l, 0), max(t, 0), min(r, image.width), min(b, image.height)))
    if image.width == 0 or image.height == 0:
        return 0
    return len(image.getcolors(maxcolors=1) or [None, None])


def start_browser(log_dir, args):
    """A headless Chromium driver with a window args.width CSS pixels wide whose page loads time
    out after args.load_seconds, or exits with UNAVAILABLE saying what is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        import PIL  # noqa: F401  (screenshots are decoded with Pillow)
    except ImportError as e:
        print(f"check_report: cannot run: {e} (apt-get install python3-selenium python3-pil)")
        sys.exit(UNAVAILABLE)
    for tool in ("chromium", "chromedriver"):
        if not shutil.which(tool):
            print(f"check_report: cannot run: no {tool} (apt-get install chromium chromium-driver)")
            sys.exit(UNAVAILABLE)
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--force-device-scale-factor=1", f"--window-size={args.width},1600", "--hide-scrollbars",
                 "--no-first-run", "--disable-extensions", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-default-apps",
                 "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                 f"--user-data-dir={os.path.join(log_dir, 'profile')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver"),
                      log_path=os.path.join(log_dir, "chromedriver.log"))
    try:
        driver = webdriver.Chrome(service=service, options=options)
    except Exception as e:  # the driver's own error types vary between versions
        print(f"check_report: cannot start chromium: {str(e).strip().splitlines()[0]}")
        sys.exit(UNAVAILABLE)
    driver.set_page_load_timeout(args.load_seconds)
    return driver


def requests_made(driver, page_url):
    """URLs the page requested other than itself and data: URIs (the browser's own pages, such
    as its new-tab page, request their resources too: those are not the page's)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") != "Network.requestWillBeSent":
            continue
        params = message["params"]
        url = params["request"]["url"]
        if params.get("documentURL", "").split("#")[0] != page_url:
            continue
        if url.split("#")[0] != page_url and not url.startswith("data:") and url not in urls:
            urls.append(url)
    return urls


# The sections: each one's place in the page and size, and its heading and drawn elements as
# boxes in CSS pixels relative to the section (l, t, r, b).
# SVG elements whose fill attribute the page's CSS overrides (a presentation attribute loses to
# any CSS rule: `.chart text{fill:#333}` turned light labels on dark cells dark grey): each as
# [tag, class, attribute, computed fill], the first 5.
OVERRIDDEN_FILL_JS = """
const probe = document.createElement('div');
document.body.appendChild(probe);
const found = [];
for (const el of document.querySelectorAll('svg [fill]')) {
  const want = el.getAttribute('fill').trim();
  if (want === '' || want === 'none' || want.startsWith('url(') || want === 'currentColor') continue;
  probe.style.color = '';
  probe.style.color = want;
  if (!probe.style.color) continue;  // not a colour the browser knows: nothing to compare
  const expected = getComputedStyle(probe).color, got = getComputedStyle(el).fill;
  if (got !== expected) found.push([el.tagName, el.getAttribute('class') || '', want, got]);
  if (found.length >= 5) break;
}
probe.remove();
return found;
"""

SECTIONS_JS = """
const box = (e, s) => { const r = e.getBoundingClientRect();
  return [r.left - s.left, r.top - s.top, r.right - s.left, r.bottom - s.top]; };
return Array.from(document.querySelectorAll('section.tn-section')).map(sec => {
  const s = sec.getBoundingClientRect();
  const h2 = sec.querySelector('h2');
  const style = h2 ? getComputedStyle(h2) : null;
  return {id: sec.id, x: s.left + window.scrollX, y: s.top + window.scrollY, width: s.width, height: s.height,
    heading: h2 ? h2.textContent.trim() : null,
    heading_visible: !!h2 && h2.getClientRects().length > 0 && style.visibility !== 'hidden'
                     && style.display !== 'none' && parseFloat(style.opacity) > 0,
    heading_box: h2 ? box(h2, s) : null,
    drawn: Array.from(sec.querySelectorAll('svg, img, canvas'))
                .filter(e => !e.parentElement.closest('svg'))
                .map(e => ({tag: e.tagName.toLowerCase(), box: box(e, s)}))};
});
"""


def screenshot(driver, info):
    """PNG bytes of a section's box, taken from the whole page (a section taller than the window,
    or below it, is captured whole: an element screenshot is cut at the window's edge)."""
    clip = {"x": info["x"], "y": info["y"], "width": info["width"], "height": info["height"], "scale": 1}
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True})
    return base64.b64decode(shot["data"])


def check_sections(driver, name, shots):
    """Lines for each section of the loaded page; whether all passed."""
    lines, ok = [], True
    sections = driver.execute_script(SECTIONS_JS)
    if not sections:
        return [f'{name}: FAIL: no <section class="tn-section"> in the page'], False
    for info in sections:
        sid = info["id"] or "(no id)"
        problems = []
        if not re.fullmatch(r"sec-[a-z0-9-]+", info["id"] or ""):
            problems.append(f'id "{info["id"]}" is not sec-NAME')
        if info["heading"] is None or not info["heading_visible"]:
            problems.append("no visible <h2>")
        elif not info["heading"]:
            problems.append("its <h2> is empty")
        if info["width"] < 1 or info["height"] < 1:
            problems.append(f"zero-sized ({info['width']:.0f}x{info['height']:.0f} px)")
        else:
            png = screenshot(driver, info)
            if shots:
                with open(os.path.join(shots, f"{os.path.splitext(name)[0]}-{sid}.png"), "wb") as f:
                    f.write(png)
            if colours(png) < 2:
                problems.append("its screenshot is one single colour")
            elif info["heading_box"]:
                below = max(0, round(info["heading_box"][3]))
                if round(info["height"]) - below < 2 or colours(png, (0, below, round(info["width"]), round(info["height"]))) < 2:
                    problems.append("nothing is drawn below its <h2> (one single colour)")
            for d in info["drawn"]:
                l, t, r, b = (round(v) for v in d["box"])
                if r - l < 1 or b - t < 1:
                    problems.append(f"a zero-sized <{d['tag']}>")
                elif colours(png, (l, t, r, b)) < 2:
                    problems.append(f"an <{d['tag']}> of {r - l}x{b - t} px is blank (one single colour)")
        ok = ok and not problems
        lines.append(f"{name}: {sid}: " + ("ok" if not problems else "FAIL: " + "; ".join(problems)))
    return lines, ok


class PageHung(Exception):
    """A page that did not finish loading (a script that never ends): its browser is replaced."""


def check_page(driver, path, shots, load_seconds):
    """Output lines for one page and whether it passed."""
    name = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        return [f"{name}: FAIL: cannot read {path}: {e}"], False
    lines = [f"{name}: FAIL: references something outside the page, {ref}" for ref in external_references(text)]
    # Opened alone in an empty directory: a relative reference finds nothing beside it.
    with tempfile.TemporaryDirectory(prefix="turbanet-check-report-") as alone:
        copy = os.path.join(alone, name)
        shutil.copyfile(path, copy)
        url = "file://" + copy
        beside = "file://" + alone + "/"  # shown as the bare file name in messages
        driver.get_log("browser")  # drop what an earlier page left
        driver.get_log("performance")
        try:
            driver.get(url)
        except Exception as e:  # selenium's TimeoutException; the hung tab takes no other page
            raise PageHung(f"{name}: FAIL: the page did not load in {load_seconds:g} s ({type(e).__name__})") from e
        section_lines, sections_ok = check_sections(driver, name, shots)
        for tag, cls, want, got in driver.execute_script(OVERRIDDEN_FILL_JS):
            lines.append(f'{name}: FAIL: the page\'s CSS overrides fill="{want}" of an <{tag}>'
                         + (f' class="{cls}"' if cls else "") + f" (drawn {got}); set it by style or class")
        for entry in driver.get_log("browser"):
            if entry["level"] == "SEVERE":
                lines.append(f"{name}: FAIL: console error: {entry['message'].replace(beside, '')}")
        for request in requests_made(driver, url):
            lines.append(f"{name}: FAIL: requested something outside the page: {request.replace(beside, '')}")
        driver.get("about:blank")
    return lines + section_lines, sections_ok and not lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("html", nargs="+", help="report pages (turbanet report RUN.h5 --out PAGE.html)")
    ap.add_argument("--screenshots", metavar="DIR",
                    help="write each section's screenshot to DIR/PAGE-sec-NAME.png (DIR is created)")
    ap.add_argument("--width", type=int, default=1280, metavar="PX",
                    help="the browser window's width in CSS pixels (default 1280; the layout may wrap differently)")
    ap.add_argument("--load-seconds", type=float, default=60, metavar="S",
                    help="a page that has not loaded after S seconds (a script that never ends) fails (default 60)")
    args = ap.parse_args()
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    passed = True
    with tempfile.TemporaryDirectory(prefix="turbanet-chromium-") as log_dir:
        driver = start_browser(log_dir, args)
        try:
            for path in args.html:
                try:
                    lines, ok = check_page(driver, os.path.abspath(path), args.screenshots, args.load_seconds)
                except PageHung as hung:
                    lines, ok = [str(hung)], False
                    driver.quit()
                    driver = start_browser(log_dir, args)
                print("\n".join(lines), flush=True)
                passed = passed and ok
        finally:
            driver.quit()
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
