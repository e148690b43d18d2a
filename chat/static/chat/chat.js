// Chat over a WebSocket, answers streamed as events: the project chat on a project page and the
// per-paper chat on the reader; the page names its socket in data-socket-path on #chat.
//
// Server events (JSON, "type"): history, history.older, answer.start, answer.delta, answer.citation,
// answer.done, error, paper.status, chat.question (a member's question, project chat), chat.cleared.
// Client messages: {"type": "question", "text"}, {"type": "cancel"}
// and {"type": "older", "before": id} (the page of messages before message *id*).
// Model and paper text is only ever put in the page through textContent (never innerHTML).

import { renderChip } from "../papers/chip.js";

const MARKER = /\[(\d+)\]/g;

const root = document.getElementById("chat");

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function readerUrl(citation) {
  return `/papers/${encodeURIComponent(citation.paper_id)}/read/?page=${encodeURIComponent(citation.page)}`;
}

const EXCERPT_CHARS = 200;
const HIGHLIGHT_CHARS = 300;
// The reader (papers/reader.js) highlights the passage stored under this key for its URL.
const HIGHLIGHT_KEY = "annotagent.highlight";

// *text* with white space folded, cut at a word boundary (as chat_tags.excerpt does).
function excerpt(text, limit = EXCERPT_CHARS) {
  const folded = (text || "").split(/\s+/).filter(Boolean).join(" ");
  if (folded.length <= limit) return folded;
  return `${folded.slice(0, limit).replace(/ \S*$/, "")}…`;
}

// The passage the reader highlights for a citation (chat_tags.highlight_quote).
function highlightQuote(citation) {
  return excerpt(citation.quote || citation.text || "", HIGHLIGHT_CHARS);
}

// A click on a citation link: the reader it opens highlights the cited passage.
function rememberHighlight(event) {
  const link = event.target.closest("a.citation");
  if (!link || event.target.closest(".copy-citation")) return;
  const url = new URL(link.href, location.href);
  try {
    sessionStorage.setItem(
      HIGHLIGHT_KEY,
      JSON.stringify({ path: `${url.pathname}${url.search}`, page: Number(link.dataset.page), quote: link.dataset.quote || "" }),
    );
  } catch {
    // No storage (private mode): the reader opens the page without a highlight.
  }
}

function copyAction(label, value) {
  const action = el("span", "copy-citation", label);
  action.setAttribute("role", "button");
  action.tabIndex = 0;
  action.dataset.copy = value;
  return action;
}

// "page 6", or "page 6 (printed 379)" when the page prints another number (chat_tags.page_words).
function pageWords(citation) {
  const printed = citation.printed ? String(citation.printed) : "";
  return printed && printed !== String(citation.page)
    ? `page ${citation.page} (printed ${printed})`
    : `page ${citation.page}`;
}

// The thumbnail of the figure a citation shows or mentions (chat_tags.figure_thumbnail), or null.
// Same-origin paths only: the image is served to those who may read the paper.
function figureThumbnail(figure) {
  const url = figure && typeof figure.url === "string" ? figure.url : "";
  if (!url.startsWith("/") || url.startsWith("//")) return null;
  const image = el("img", "citation-figure");
  image.src = url;
  image.alt = String(figure.label || "");
  image.loading = "lazy";
  return image;
}

// The link and hover card of one citation; chat_tags.citation_link renders the same markup.
function citationLink(n, citation) {
  const title = citation.label || citation.title || `Paper ${citation.paper_id}`;
  const link = el("a", "citation", `[${n}]`);
  link.href = readerUrl(citation);
  link.dataset.title = title;
  link.dataset.page = String(citation.page);
  link.dataset.quote = highlightQuote(citation);
  link.title = `${title}, ${pageWords(citation)}`;
  const popup = el("span", "citation-popup");
  popup.setAttribute("role", "tooltip");
  const heading = [el("span", "citation-title", title), `, ${pageWords(citation)}`];
  if (citation.ocr) heading.push(" ", el("span", "label label-ocr", "OCR text"));
  const thumbnail = figureThumbnail(citation.figure);
  if (thumbnail) heading.unshift(thumbnail);
  if (citation.cite) {
    const quote = citation.quote || excerpt(citation.text);
    if (quote) popup.append(el("span", "citation-quote", `“${quote}”`));
    popup.append(...heading);
    const who = [citation.author, citation.year].filter(Boolean).join(" ");
    if (who) popup.append(el("span", "citation-meta", who));
    const actions = el("span", "citation-actions");
    actions.append(copyAction("Copy citation", citation.cite), " ", copyAction("Copy BibTeX", citation.bibtex || ""));
    popup.append(actions);
  } else {
    popup.append(...heading);
  }
  link.append(popup);
  return link;
}

// "Copy citation" / "Copy BibTeX" inside a hover card: copy, do not follow the link around it.
async function copyCitation(event) {
  const action = event.target.closest(".copy-citation");
  if (!action) return;
  if (event.type === "keydown" && event.key !== "Enter" && event.key !== " ") return;
  event.preventDefault();
  event.stopPropagation();
  const label = action.textContent;
  try {
    await navigator.clipboard.writeText(action.dataset.copy || "");
    action.textContent = "Copied";
  } catch {
    action.textContent = "Copy failed";
  }
  setTimeout(() => {
    action.textContent = label;
  }, 1500);
}

const STATUS_LABELS = {
  answered: "answered",
  partly_answered: "partly answered",
  not_stated: "not stated",
  no_papers: "no papers",
};

// Fill *container* with *text*, each [N] known to *citations* as a link; other markers stay text.
// A quoted sentence right before a marker (the extractive answer's “...” [N]): two sentences
// citing one passage each show and highlight their own (chat_tags.QUOTED_BEFORE).
const QUOTED_BEFORE = /\u201c([^\u201c\u201d]{20,})\u201d\s*$/;

export function renderText(container, text, citations) {
  container.replaceChildren();
  let position = 0;
  for (const match of text.matchAll(MARKER)) {
    const citation = citations[match[1]];
    if (!citation) continue;
    const before = text.slice(position, match.index);
    const quoted = before.match(QUOTED_BEFORE);
    container.append(before, citationLink(match[1], quoted ? { ...citation, quote: quoted[1] } : citation));
    position = match.index + match[0].length;
  }
  container.append(text.slice(position));
}

function label(className, text) {
  return el("span", `label ${className}`, text);
}

function buildMessage(message) {
  const { id, role, text, citations, state, extractive, status } = message;
  const item = el("li", `message message-${role}`);
  if (id !== undefined && id !== null) item.dataset.messageId = String(id);
  // data-state mirrors the saved message's state (complete, stopped, failed) or "streaming".
  item.dataset.state = state || "complete";
  // In a shared project chat a question names who asked it ("You" for the viewer's own).
  const asker = message.asker && message.asker !== root.dataset.me ? message.asker : "You";
  const head = el("p", "message-role", role === "user" ? asker : "Annotagent");
  if (extractive) head.append(" ", label("label-extractive", "extractive answer"));
  if (STATUS_LABELS[status]) head.append(" ", label(`label-status label-${status}`, STATUS_LABELS[status]));
  if (state === "stopped") head.append(" ", label("label-stopped", "stopped"));
  if (state === "failed") head.append(" ", label("label-failed", "failed"));
  const body = el("div", "message-text");
  if (!text && state === "stopped") body.append(el("span", "hint", "Stopped before any text was written."));
  else renderText(body, text || "", citations || {});
  item.append(head, body);
  // Other features (notes: suggestion cards, "Save to notes") add to a finished message here.
  if (state !== "streaming") document.dispatchEvent(new CustomEvent("chat:message", { detail: { item, message } }));
  return item;
}

// A streamed bubble that will get no answer.done: stop showing it as streaming.
function endStreaming(item, state) {
  if (!item.classList.contains("streaming")) return;
  item.classList.remove("streaming");
  item.dataset.state = state;
  item.querySelector(".message-role").append(" ", label(`label-${state}`, state));
}

// Indexing reads a paper's title, authors and year: show them once it settles, without a reload.
async function refreshPaperDetails(paperId, holders) {
  let paper;
  try {
    const response = await fetch(`/api/papers/${Number(paperId)}/`, {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    if (!response.ok) return;
    paper = await response.json();
  } catch {
    return; // Offline for a moment: the next page load shows them.
  }
  for (const holder of holders) {
    renderChip(holder, holder.dataset.status, paper.index_error, paper.extraction_warning, paper.ocr_pages);
    const item = holder.closest(".paper-item");
    if (!item) continue;
    const title = item.querySelector(".paper-title");
    if (title && paper.title) title.textContent = paper.title;
    const meta = item.querySelector(".meta");
    if (meta) meta.textContent = [paper.authors, paper.year].filter(Boolean).join(" · ");
  }
}

function updatePaperStatus({ paper_id: paperId, status, error }) {
  const holders = [...document.querySelectorAll(`.paper-status[data-paper-id="${Number(paperId)}"]`)];
  if (status === "ready" || status === "failed") refreshPaperDetails(paperId, holders);
  for (const holder of holders) renderChip(holder, status, error);
}

function start() {
  const socketPath = root.dataset.socketPath;
  const list = document.getElementById("chat-messages");
  const form = document.getElementById("chat-form");
  const question = document.getElementById("chat-question");
  const send = document.getElementById("chat-send");
  const stop = document.getElementById("chat-stop");
  const notice = document.getElementById("chat-notice");
  const stateLine = document.getElementById("chat-state");
  const suggestions = document.getElementById("chat-suggestions");

  let socket = null;
  let retryDelay = 1000;
  let current = null; // the assistant bubble being streamed: {item, body, text, citations}
  let pending = null; // this viewer's question bubble, until the server echoes it as chat.question

  const setBusy = (busy) => {
    stop.disabled = !busy;
    send.disabled = busy;
  };
  const showNotice = (text) => {
    notice.textContent = text;
    notice.hidden = !text;
  };
  const scrollToEnd = () => list.lastElementChild?.scrollIntoView({ block: "end", behavior: "smooth" });
  const hideSuggestions = () => {
    if (suggestions) suggestions.hidden = true;
  };

  // "Earlier messages": the history comes in pages, the newest first; older pages on request.
  const earlier = el("button", "link-button chat-earlier", "Show earlier messages");
  earlier.type = "button";
  earlier.hidden = true;
  list.before(earlier);
  const oldestId = () => list.querySelector("[data-message-id]")?.dataset.messageId;
  earlier.addEventListener("click", () => {
    const before = Number(oldestId());
    if (!before || !socket || socket.readyState !== WebSocket.OPEN) return;
    earlier.disabled = true;
    socket.send(JSON.stringify({ type: "older", before }));
  });
  const showEarlier = (hasMore) => {
    earlier.hidden = !hasMore;
    earlier.disabled = false;
  };

  const handlers = {
    history({ messages, has_more: hasMore }) {
      list.replaceChildren(...messages.map(buildMessage));
      if (messages.length) hideSuggestions();
      showEarlier(hasMore);
      current = null;
      setBusy(false);
    },
    "history.older"({ messages, has_more: hasMore }) {
      list.prepend(...messages.map(buildMessage));
      showEarlier(hasMore);
    },
    "answer.start"({ extractive, indexing, failed }) {
      const item = buildMessage({ role: "assistant", text: "", citations: {}, extractive, state: "streaming" });
      item.classList.add("streaming");
      list.append(item);
      current = { item, body: item.querySelector(".message-text"), text: "", citations: {} };
      const notices = [];
      if (indexing && indexing.length) notices.push(`Still indexing, so not searched yet: ${indexing.join("; ")}.`);
      if (failed && failed.length) notices.push(`Not searched, indexing failed: ${failed.join("; ")}.`);
      showNotice(notices.join(" "));
      setBusy(true);
      scrollToEnd();
    },
    "answer.delta"({ text }) {
      if (!current) return;
      current.text += text;
      renderText(current.body, current.text, current.citations);
    },
    "answer.citation"(citation) {
      if (!current) return;
      current.citations[String(citation.n)] = citation;
      renderText(current.body, current.text, current.citations);
    },
    "answer.done"({ message }) {
      const item = buildMessage(message);
      if (current) current.item.replaceWith(item);
      else list.append(item);
      current = null;
      setBusy(false);
      scrollToEnd();
    },
    error({ message }) {
      // The connection stays open; an answer.done with the partial answer may still follow.
      showNotice(message);
      if (current) endStreaming(current.item, "failed");
      else if (pending) {
        // Refused before any answer began (too long, too fast): the question goes back into the
        // box, so nothing typed is lost.
        pending.item.remove();
        if (!question.value) question.value = pending.text;
        pending = null;
      }
      setBusy(false);
    },
    "paper.status": updatePaperStatus,
    "chat.question"({ message }) {
      // Every member gets every question; the asker's own is already on the page.
      if (pending && pending.text === message.text) {
        const own = buildMessage(message);
        pending.item.replaceWith(own);
        pending = null;
        return;
      }
      hideSuggestions();
      list.append(buildMessage(message));
      scrollToEnd();
    },
    "chat.cleared"() {
      pending = null;
      showNotice("The chat was cleared.");
    },
  };

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}${socketPath}`);
    stateLine.textContent = "Connecting…";
    root.dataset.socket = "connecting";
    socket.addEventListener("open", () => {
      retryDelay = 1000;
      stateLine.textContent = "";
      root.dataset.socket = "open";
    });
    socket.addEventListener("message", (event) => {
      let data;
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      const handler = handlers[data.type];
      if (handler) handler(data);
    });
    socket.addEventListener("close", () => {
      // The server saves an interrupted answer as stopped; the history sent on reconnect shows it.
      if (current) endStreaming(current.item, "stopped");
      setBusy(false);
      current = null;
      root.dataset.socket = "closed";
      stateLine.textContent = `Disconnected; reconnecting in ${Math.round(retryDelay / 1000)} s…`;
      setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 30000);
    });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text) return;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      showNotice("Not connected yet; try again in a moment.");
      return;
    }
    showNotice("");
    hideSuggestions();
    const item = buildMessage({ role: "user", text, citations: {} });
    list.append(item);
    pending = { item, text };
    socket.send(JSON.stringify({ type: "question", text }));
    question.value = "";
    setBusy(true);
    scrollToEnd();
  });
  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  stop.addEventListener("click", () => {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "cancel" }));
  });
  for (const button of document.querySelectorAll(".suggestion")) {
    button.addEventListener("click", () => {
      question.value = button.dataset.prompt;
      question.focus();
    });
  }
  connect();
}

// A hover card opens above its citation; where the window has no room above (or to the right), it
// opens below (or leftwards) instead, so it is never clipped.
function placePopup(event) {
  const link = event.target instanceof Element ? event.target.closest(".citation") : null;
  const popup = link && link.querySelector(".citation-popup");
  if (!popup) return;
  popup.classList.remove("below", "leftwards");
  const anchor = link.getBoundingClientRect();
  const card = popup.getBoundingClientRect();
  if (anchor.top - card.height < 8) popup.classList.add("below");
  if (anchor.left + card.width > document.documentElement.clientWidth - 8) popup.classList.add("leftwards");
}

document.addEventListener("mouseover", placePopup);
document.addEventListener("focusin", placePopup);
document.addEventListener("click", copyCitation);
document.addEventListener("click", rememberHighlight, true);
document.addEventListener("keydown", copyCitation);
if (root) start();
