// Marp CLI configuration for the gpulab decks (scripts/render-slides.sh passes it with --config).
// KaTeX's fonts come from the pinned katex package here, not from a CDN: the CI machine and the
// GPU machine have no network, and a PDF rendered without them falls back to a text font.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const katexFonts = join(dirname(require.resolve("katex/package.json")), "dist", "fonts");

export default {
  html: true,
  allowLocalFiles: true,
  themeSet: [join(here, "theme")],
  options: {
    math: { lib: "katex", katexFontPath: `${pathToFileURL(katexFonts).href}/` },
    // Twemoji would fetch emoji images from a CDN; the decks use none.
    emoji: { shortcode: false, unicode: false },
  },
};
