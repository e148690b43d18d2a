// The reader's PDF view: PDF.js (vendored, papers/vendor/pdfjs) renders one page with its text
// layer; the cited passage is highlighted and scrolled into view. The passage comes from the
// reader URL (?quote=...) or from the citation link clicked in a chat (chat.js keeps it in
// sessionStorage under HIGHLIGHT_KEY, so citation hrefs stay plain page links). Previous/Next
// turn pages in place and keep the page header, the address and the browser history in sync.
// Without JavaScript the page header links and "Open PDF" still work.

import { GlobalWorkerOptions, TextLayer, getDocument } from "./vendor/pdfjs/pdf.min.mjs";

// chat.js stores the passage of a clicked citation under this key.
const HIGHLIGHT_KEY = "annotagent.highlight";
const MIN_MATCH_CHARS = 24;

const viewer = document.getElementById("pdf-viewer");

// Matching compares letters and digits only, lower case, accents and ligatures ("ﬁ") unfolded.
// The text layer has one span per line and keeps the PDF's spacing and line-end hyphens
// ("election time-" then "outs") where the quote says "timeouts" (or "time-outs"), so hyphens and
// white space are left out on both sides. Folded one code point at a time, so that each folded
// character can be traced back to its span.
const NOT_LETTER = /[^\p{L}\p{N}]/gu;

function foldEach(text) {
  return Array.from(text, (char) => char.toLowerCase().normalize("NFKD").replace(NOT_LETTER, ""));
}

// The passage to highlight on *page*: the one chat.js stored for this URL, else ?quote=.
function wantedQuote(page) {
  try {
    const stored = JSON.parse(sessionStorage.getItem(HIGHLIGHT_KEY) || "null");
    if (stored && stored.path === `${location.pathname}${location.search}` && Number(stored.page) === page) {
      return stored.quote || "";
    }
  } catch {
    // No storage (private mode) or a damaged entry: no highlight from a click.
  }
  return Number(viewer.dataset.page) === page ? viewer.dataset.quote || "" : "";
}

// Mark the text-layer spans that hold *quote* (or its longest leading part found, at least
// MIN_MATCH_CHARS folded characters) with class "cited"; returns the first marked span.
function highlight(spans, quote) {
  const wanted = foldEach(quote).join("");
  if (!wanted) return null;
  let text = "";
  // owners[i]: the index in *spans* of the span text[i] was folded from.
  const owners = [];
  spans.forEach((span, index) => {
    for (const piece of foldEach(span.textContent)) {
      text += piece;
      for (let i = 0; i < piece.length; i += 1) owners.push(index);
    }
  });
  let length = wanted.length;
  let at = text.indexOf(wanted);
  while (at < 0 && length > MIN_MATCH_CHARS) {
    length = Math.max(MIN_MATCH_CHARS, Math.floor(length * 0.7));
    at = text.indexOf(wanted.slice(0, length));
  }
  if (at < 0) return null;
  let first = null;
  for (const index of new Set(owners.slice(at, at + length))) {
    spans[index].classList.add("cited");
    first ??= spans[index];
  }
  return first;
}

function pageHeader(number) {
  const count = Number(viewer.dataset.pageCount) || 0;
  const printed = JSON.parse(viewer.dataset.printed || "[]")[number - 1] || "";
  let words = `Page ${number}${count ? ` of ${count}` : ""}`;
  if (printed && printed !== String(number)) words += ` (printed ${printed})`;
  return words;
}

function syncNavigation(number) {
  const count = Number(viewer.dataset.pageCount) || 0;
  const header = document.getElementById("reader-page");
  if (header) header.textContent = pageHeader(number);
  const nav = header?.closest(".reader-nav");
  if (!nav) return;
  for (const link of nav.querySelectorAll("a[data-step]")) {
    const target = number + Number(link.dataset.step);
    link.href = `${viewer.dataset.readerUrl}?page=${target}`;
    link.hidden = target < 1 || (count > 0 && target > count);
  }
}

let documentTask = null;
let shown = 0;

async function showPage(number) {
  const pdf = await documentTask;
  number = Math.min(Math.max(number, 1), pdf.numPages);
  const page = await pdf.getPage(number);
  const holder = document.getElementById("pdf-pages");
  const width = Math.max(holder.clientWidth - 24, 320);
  const viewport = page.getViewport({ scale: width / page.getViewport({ scale: 1 }).width });
  const ratio = window.devicePixelRatio || 1;

  const sheet = document.createElement("div");
  sheet.className = "pdf-page";
  sheet.dataset.pageNumber = String(number);
  sheet.style.width = `${Math.floor(viewport.width)}px`;
  sheet.style.height = `${Math.floor(viewport.height)}px`;
  sheet.style.setProperty("--total-scale-factor", String(viewport.scale));
  sheet.style.setProperty("--scale-factor", String(viewport.scale));
  const canvas = document.createElement("canvas");
  canvas.width = Math.floor(viewport.width * ratio);
  canvas.height = Math.floor(viewport.height * ratio);
  canvas.style.width = `${Math.floor(viewport.width)}px`;
  canvas.style.height = `${Math.floor(viewport.height)}px`;
  const layer = document.createElement("div");
  layer.className = "textLayer";
  sheet.append(canvas, layer);
  holder.replaceChildren(sheet);
  shown = number;

  await page.render({
    canvasContext: canvas.getContext("2d"),
    canvas,
    viewport,
    transform: ratio === 1 ? null : [ratio, 0, 0, ratio, 0, 0],
  }).promise;
  const textLayer = new TextLayer({ textContentSource: page.streamTextContent(), container: layer, viewport });
  await textLayer.render();
  const first = highlight(textLayer.textDivs, wantedQuote(number));
  if (first) {
    first.scrollIntoView({ block: "center" });
    viewer.dataset.highlighted = "true";
  } else {
    delete viewer.dataset.highlighted;
  }
  viewer.dataset.shownPage = String(number);
}

function turnTo(number, { push }) {
  const count = Number(viewer.dataset.pageCount) || 0;
  number = Math.max(count ? Math.min(number, count) : number, 1);
  // The server's notice about a ?page= past the end is about the page first shown only.
  document.getElementById("page-notice")?.remove();
  if (push) history.pushState({ page: number }, "", `${viewer.dataset.readerUrl}?page=${number}`);
  syncNavigation(number);
  showPage(number).catch(showError);
}

function showError(error) {
  const holder = document.getElementById("pdf-pages");
  const message = document.createElement("p");
  message.className = "notice";
  message.textContent = `The page could not be shown (${error && error.message ? error.message : error}). `;
  const link = document.createElement("a");
  link.href = `${viewer.dataset.fileUrl}#page=${shown || viewer.dataset.page}`;
  link.textContent = "Open the PDF";
  message.append(link);
  holder.replaceChildren(message);
}

function start() {
  GlobalWorkerOptions.workerSrc = viewer.dataset.workerUrl;
  documentTask = getDocument({ url: viewer.dataset.fileUrl, standardFontDataUrl: viewer.dataset.fontsUrl }).promise;
  const nav = document.querySelector(".reader-nav");
  nav?.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-step]");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    turnTo(shown + Number(link.dataset.step), { push: true });
  });
  window.addEventListener("popstate", () => {
    const number = Number(new URLSearchParams(location.search).get("page")) || 1;
    turnTo(number, { push: false });
  });
  const first = Number(viewer.dataset.page) || 1;
  syncNavigation(first);
  showPage(first).catch(showError);
}

if (viewer) start();
