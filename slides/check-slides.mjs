#!/usr/bin/env node
// check-slides.mjs: loads Marp HTML decks in headless Chromium and fails when a slide loses
// content. Marp clips every slide to its 1280 x 720 box (overflow: hidden), so a table row or
// an image that does not fit is silently cut off in the HTML, the PDF and the PNGs; only the
// browser's layout can tell, hence a real browser rather than a text heuristic.
//
// Usage: node check-slides.mjs [--max-words N] DECK.html ...
//   (render the decks with `marp --template bare` first; scripts/render-slides.sh --check does)
// Checks, per slide:
//   - content past the slide's content box (its padding included: the page number lives there),
//     in height or width, measured as the section's scroll size against its client size and as
//     the bounding box of every element inside it;
//   - a <pre> or table that scrolls inside itself (its own overflow hides the cut);
//   - an image that did not load;
//   - more than --max-words words of prose (default 70; slides of class "refs" are exempt).
// Exit status: 0 all slides fit; 1 a slide failed (one line each); 2 the checker could not run.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import puppeteer from "puppeteer-core";

function parseArgs(argv) {
  const files = [];
  let maxWords = 70;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--max-words") {
      maxWords = Number(argv[++i]);
      if (!Number.isInteger(maxWords) || maxWords <= 0) {
        console.error("check-slides: --max-words needs a positive integer");
        process.exit(2);
      }
    } else if (argv[i].startsWith("-")) {
      console.error(`check-slides: unknown option ${argv[i]}; usage: check-slides.mjs [--max-words N] DECK.html ...`);
      process.exit(2);
    } else {
      files.push(resolve(argv[i]));
    }
  }
  if (files.length === 0) {
    console.error("check-slides: no decks given; usage: check-slides.mjs [--max-words N] DECK.html ...");
    process.exit(2);
  }
  for (const f of files) {
    if (!existsSync(f)) {
      console.error(`check-slides: ${f} does not exist; render the decks first (scripts/render-slides.sh)`);
      process.exit(2);
    }
  }
  return { files, maxWords };
}

// Runs inside the page: one record per slide.
function inspectSlides(maxWords) {
  const slop = 1; // sub-pixel rounding
  const describe = (el) => {
    const img = el.tagName === "IMG" ? el : el.querySelector("img");
    const text = (el.innerText || "").replace(/\s+/g, " ").trim() || (img ? img.getAttribute("src") : "");
    return `<${el.tagName.toLowerCase()}> "${text.slice(0, 50)}${text.length > 50 ? "…" : ""}"`;
  };
  const sections = [...document.querySelectorAll("svg[data-marpit-svg] > foreignObject > section")];
  return sections.map((section, index) => {
    const problems = [];
    const box = section.getBoundingClientRect();
    const scale = box.width / section.offsetWidth || 1;
    const style = getComputedStyle(section);
    const pad = (side) => parseFloat(style[`padding${side}`]) || 0;
    // The content box in page coordinates: what may hold content.
    const inner = {
      top: box.top + pad("Top") * scale,
      bottom: box.bottom - pad("Bottom") * scale,
      left: box.left + pad("Left") * scale,
      right: box.right - pad("Right") * scale,
    };
    // Elements whose box leaves the content box: cut off where they pass the slide's edge,
    // into the margin (where the page number lives) otherwise. Only the outermost offender is
    // named (a table, not each of its rows).
    const leaves = [];
    for (const el of section.querySelectorAll("h1, h2, h3, p, li, table, pre, marp-pre, img, blockquote, .katex-display")) {
      const r = el.getBoundingClientRect();
      if ((r.width === 0 && r.height === 0) || leaves.some((outer) => outer.contains(el))) continue;
      const below = (r.bottom - inner.bottom) / scale;
      const right = (r.right - inner.right) / scale;
      if (below <= slop && right <= slop) continue;
      leaves.push(el);
      const [amount, edge, lost] = below > slop
        ? [below, "bottom", (r.bottom - box.bottom) / scale]
        : [right, "right", (r.right - box.right) / scale];
      problems.push(lost > slop
        ? `${describe(el)} is cut off: ${Math.round(lost)} px past the slide's ${edge} edge`
        : `${describe(el)} runs ${Math.round(amount)} px into the ${edge} margin`);
    }
    // Anything the element list missed (text directly in the section, a positioned box).
    if (leaves.length === 0 && (section.scrollHeight > section.clientHeight + slop || section.scrollWidth > section.clientWidth + slop)) {
      problems.push(`content overflows: ${section.scrollWidth}x${section.scrollHeight} px in a ${section.clientWidth}x${section.clientHeight} slide`);
    }
    for (const el of section.querySelectorAll("pre, marp-pre, table")) {
      if (el.scrollWidth > el.clientWidth + slop || el.scrollHeight > el.clientHeight + slop) {
        problems.push(`${describe(el)} is cut inside its own box (${el.scrollWidth}x${el.scrollHeight} in ${el.clientWidth}x${el.clientHeight})`);
      }
    }
    for (const img of section.querySelectorAll("img")) {
      if (!img.complete || img.naturalWidth === 0) problems.push(`image ${img.getAttribute("src")} did not load`);
    }
    if (!section.classList.contains("refs")) {
      // Prose only: code blocks are read differently, and a formula counts as one word (KaTeX
      // also carries a hidden MathML copy of it).
      const prose = section.cloneNode(true);
      prose.querySelectorAll("pre, marp-pre, .katex-mathml").forEach((el) => el.remove());
      prose.querySelectorAll(".katex").forEach((el) => el.replaceWith(" formula "));
      const words = (prose.textContent || "").split(/\s+/).filter((w) => /[A-Za-z0-9]/.test(w)).length;
      if (words > maxWords) problems.push(`${words} words (at most ${maxWords}; a lecture slide is not a page)`);
    }
    const title = section.querySelector("h1, h2");
    return { slide: index + 1, title: title ? title.innerText.trim() : "", problems };
  });
}

async function main() {
  const { files, maxWords } = parseArgs(process.argv.slice(2));
  const executablePath = process.env.CHROME_PATH || "/usr/bin/chromium";
  if (!existsSync(executablePath)) {
    console.error(`check-slides: no Chromium at ${executablePath}; install it (apt-get install chromium) or set CHROME_PATH`);
    process.exit(2);
  }
  const profile = mkdtempSync(join(tmpdir(), "gpulab-slides-"));
  // The flags keep a closed network quiet (no update, sync or background requests) and let
  // Chromium run as root in a container.
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--allow-file-access-from-files"],
  });
  let failed = 0;
  let slides = 0;
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 720 });
    for (const file of files) {
      await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
      await page.evaluate(() => document.fonts.ready.then(() => undefined));
      const records = await page.evaluate(inspectSlides, maxWords);
      if (records.length === 0) {
        console.log(`${file}: no Marp slides found (render with marp --template bare)`);
        failed++;
        continue;
      }
      for (const r of records) {
        slides++;
        for (const p of r.problems) {
          console.log(`${file} slide ${r.slide} (${r.title || "untitled"}): ${p}`);
        }
        if (r.problems.length) failed++;
      }
    }
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
  console.log(`check-slides: ${slides} slides in ${files.length} decks, ${failed} with problems`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(`check-slides: ${err.message}`);
  process.exit(2);
});
