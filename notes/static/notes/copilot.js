// Notes beside the chats: suggestion cards (accept / reject, saved server-side), "Save to notes" on
// answers, the project notes copilot and the library copilot with @-mentions.
//
// Model text and note text go into the page through textContent only; diffs and previews are text.
// Accepting re-checks permission and conflicts on the server (409: the card shows the new diff).

import { el, renderText } from "../chat/chat.js";

const panel = document.getElementById("notes-panel");
const copilot = document.getElementById("copilot");

function csrfToken() {
  const input = document.querySelector("input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

async function api(method, url, body) {
  const response = await fetch(url, {
    method,
    credentials: "same-origin",
    headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try {
    data = await response.json();
  } catch {
    data = {};
  }
  return { ok: response.ok, status: response.status, data };
}

// --- the notes tree ------------------------------------------------------------------------------

function treeQuery() {
  const params = new URLSearchParams({ item_type: panel.dataset.itemType });
  if (panel.dataset.itemId) params.set("item_id", panel.dataset.itemId);
  return params;
}

async function refreshTree() {
  if (!panel) return [];
  const { ok, data } = await api("GET", `/api/notes/tree/?${treeQuery()}`);
  if (!ok) return [];
  const list = panel.querySelector("#note-tree");
  const rows = [];
  const walk = (nodes, depth) => {
    for (const node of nodes) {
      rows.push([depth, node]);
      walk(node.children, depth + 1);
    }
  };
  walk(data.tree, 0);
  list.replaceChildren(
    ...rows.map(([depth, node]) => {
      const item = el("li", `note-row depth-${Math.min(depth, 6)}${node.isFolder ? " is-folder" : ""}`);
      item.dataset.noteId = String(node.id);
      const link = el("a", `note-link${node.isFolder ? " folder-link" : ""}`, node.name);
      link.href = `/notes/${Number(node.id)}/`;
      item.append(el("span", "note-icon", node.isFolder ? "▸" : "•"), " ", link);
      return item;
    }),
  );
  if (!rows.length) list.append(el("li", "empty note-empty", "No notes yet."));
  return rows.map(([, node]) => node);
}

const canWrite = () => !panel || panel.dataset.role === "writer";

// --- suggestion cards ----------------------------------------------------------------------------

function renderDiff(diff) {
  const block = el("pre", "suggestion-diff");
  for (const line of diff || []) {
    const kind = line.op === "+" ? "diff-add" : line.op === "-" ? "diff-del" : "diff-same";
    block.append(el("span", `diff-line ${kind}`, `${line.op} ${line.text}`), "\n");
  }
  return block;
}

function suggestionCard(suggestion, urlFor) {
  const card = el("div", "suggestion-card");
  card.dataset.suggestionId = suggestion.id;
  const head = el("p", "suggestion-head");
  head.append(
    el("span", `badge badge-${suggestion.type}`, suggestion.type === "edit" ? "Edit" : "New note"),
    " ",
    el("strong", "suggestion-name", suggestion.noteName),
  );
  const description = el("p", "suggestion-description", suggestion.description || "");
  const body = el("div", "suggestion-body");
  const state = el("p", "suggestion-state");
  state.setAttribute("role", "status");
  const accept = el("button", "primary", "Accept");
  const reject = el("button", "", "Reject");
  accept.type = reject.type = "button";
  const actions = el("div", "suggestion-actions");
  actions.append(accept, reject);
  card.append(head, description, body, actions, state);

  const show = (s) => {
    card.dataset.status = s.status;
    body.replaceChildren(
      s.type === "edit" ? renderDiff(s.diff) : el("div", "suggestion-preview", s.preview || ""),
    );
    const pending = s.status === "pending";
    actions.hidden = !pending;
    accept.disabled = !canWrite();
    if (!canWrite() && pending) state.textContent = "You can read these notes but not accept changes to them.";
    if (s.status === "accepted") {
      state.replaceChildren("Accepted. ");
      if (s.noteId) {
        const link = el("a", "", "Open the note");
        link.href = `/notes/${Number(s.noteId)}/`;
        state.append(link);
      }
    }
    if (s.status === "rejected") state.textContent = "Rejected.";
  };
  const decide = async (action) => {
    accept.disabled = reject.disabled = true;
    const { ok, status, data } = await api("POST", urlFor(suggestion, action));
    accept.disabled = !canWrite();
    reject.disabled = false;
    if (data.suggestion) Object.assign(suggestion, data.suggestion);
    show(suggestion);
    if (ok) {
      if (action === "accept") refreshTree();
    } else {
      state.textContent = (data.error && data.error.message) || `That did not work (${status}).`;
    }
  };
  accept.addEventListener("click", () => decide("accept"));
  reject.addEventListener("click", () => decide("reject"));
  show(suggestion);
  return card;
}

function appendCards(item, message, urlFor) {
  const suggestions = message.suggestions || [];
  if (!suggestions.length) return;
  const list = el("div", "suggestion-cards");
  for (const suggestion of suggestions) list.append(suggestionCard(suggestion, urlFor));
  item.append(list);
}

// --- "Save to notes" -----------------------------------------------------------------------------

function saveControl(message) {
  const box = el("details", "save-to-notes");
  const summary = el("summary", "", "Save to notes");
  const form = el("form", "save-form");
  const choice = el("select", "save-target");
  choice.setAttribute("aria-label", "Save as");
  choice.append(new Option("as a new note", ""));
  const save = el("button", "", "Save");
  save.type = "submit";
  const state = el("span", "hint save-state");
  form.append(choice, " ", save, " ", state);
  box.append(summary, form);
  box.addEventListener("toggle", async () => {
    if (!box.open) return;
    const notes = await refreshTree();
    choice.replaceChildren(new Option("as a new note", ""));
    for (const note of notes) if (!note.isFolder) choice.append(new Option(`appended to “${note.name}”`, note.id));
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      item_type: panel.dataset.itemType,
      item_id: panel.dataset.itemId ? Number(panel.dataset.itemId) : null,
      text: message.text,
      citations: message.citations || {},
      note_id: choice.value ? Number(choice.value) : null,
    };
    const { ok, status, data } = await api("POST", "/api/notes/save-answer/", body);
    if (!ok) {
      state.textContent = (data.error && data.error.message) || "Could not save.";
      return;
    }
    // 200 for a new note: a note of these notes already holds this answer (nothing was written).
    state.replaceChildren(body.note_id === null && status === 200 ? "Already saved in " : "Saved to ");
    const link = el("a", "", `“${data.name}”`);
    link.href = `/notes/${Number(data.id)}/`;
    state.append(link, ".");
    refreshTree();
  });
  return box;
}

// Answers of the chat on this page (project chat or the reader's paper chat).
document.addEventListener("chat:message", ({ detail: { item, message } }) => {
  if (message.role !== "assistant") return;
  const chat = document.getElementById("chat");
  const paperId = chat && chat.dataset.paperId;
  if (paperId && message.id !== undefined) {
    appendCards(item, message, (s, action) =>
      `/api/notes/suggestions/paper/${Number(paperId)}/${Number(message.id)}/${encodeURIComponent(s.id)}/${action}/`,
    );
  }
  if (panel && canWrite() && message.text && message.state === "complete") item.append(saveControl(message));
});

// --- the copilots --------------------------------------------------------------------------------

function copilotMessage(message) {
  const item = el("li", `message message-${message.role}`);
  if (message.id !== undefined) item.dataset.messageId = String(message.id);
  item.dataset.state = message.state || "complete";
  const body = el("div", "message-text");
  renderText(body, message.text || "", message.citations || {});
  item.append(el("p", "message-role", message.role === "user" ? "You" : "Copilot"), body);
  if (message.role === "assistant") {
    appendCards(item, message, (s, action) =>
      `/api/notes/suggestions/copilot/${Number(message.id)}/${encodeURIComponent(s.id)}/${action}/`,
    );
  }
  return item;
}

function startCopilot() {
  const form = document.getElementById("copilot-form");
  if (!form) return; // no chat model: the panel says so
  const list = document.getElementById("copilot-messages");
  const question = document.getElementById("copilot-question");
  const send = document.getElementById("copilot-send");
  const notice = document.getElementById("copilot-notice");
  const library = copilot.dataset.library === "true";
  const url = library ? "/api/library/copilot/" : `/api/projects/${Number(copilot.dataset.projectId)}/copilot/`;
  const mentions = library ? startMentions(question) : null;

  api("GET", url).then(({ ok, data }) => {
    if (ok) list.replaceChildren(...data.messages.map(copilotMessage));
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text) return;
    notice.hidden = true;
    send.disabled = true;
    list.append(copilotMessage({ role: "user", text }));
    const thinking = el("li", "message message-assistant streaming", "Thinking…");
    list.append(thinking);
    const body = { text };
    if (mentions) body.mentions = mentions.selected();
    const { ok, data } = await api("POST", url, body);
    thinking.remove();
    send.disabled = false;
    if (!ok) {
      notice.textContent = (data.error && data.error.message) || "The copilot could not answer.";
      notice.hidden = false;
      return;
    }
    question.value = "";
    list.append(copilotMessage(data));
  });
  copilot.dataset.ready = "true"; // the form is driven from here on
}

// @-mentions: typing "@" and a few letters offers papers, notes and projects; a pick becomes a chip.
function startMentions(question) {
  const menu = document.getElementById("mention-menu");
  const chips = document.getElementById("copilot-mentions");
  const chosen = new Map();
  let items = null;

  const load = async () => {
    if (items) return items;
    const { ok, data } = await api("GET", "/api/notes/mentions/");
    items = ok ? data.items : [];
    return items;
  };
  const renderChips = () => {
    chips.replaceChildren(
      ...[...chosen.values()].map((mention) => {
        const chip = el("li", "mention-chip");
        chip.append(el("span", "", `${mention.type}: ${mention.title}`));
        if (mention.type === "paper") {
          const label = el("label", "mention-full");
          const box = el("input");
          box.type = "checkbox";
          box.checked = mention.full_text;
          box.addEventListener("change", () => (mention.full_text = box.checked));
          label.append(box, " full text");
          chip.append(" ", label);
        }
        const remove = el("button", "link-button", "remove");
        remove.type = "button";
        remove.addEventListener("click", () => {
          chosen.delete(`${mention.type}:${mention.id}`);
          renderChips();
        });
        chip.append(" ", remove);
        return chip;
      }),
    );
  };
  question.addEventListener("input", async () => {
    const match = /@([^\s@]*)$/.exec(question.value.slice(0, question.selectionStart));
    if (!match) {
      menu.hidden = true;
      return;
    }
    const term = match[1].toLowerCase();
    const found = (await load()).filter((i) => i.title.toLowerCase().includes(term)).slice(0, 8);
    menu.replaceChildren(
      ...found.map((candidate) => {
        const option = el("li", "mention-option", `${candidate.type}: ${candidate.title}`);
        option.setAttribute("role", "option");
        option.tabIndex = 0;
        option.addEventListener("click", () => {
          chosen.set(`${candidate.type}:${candidate.id}`, { ...candidate, full_text: false });
          const start = question.selectionStart - match[0].length;
          question.value = `${question.value.slice(0, start)}@${candidate.title} ${question.value.slice(question.selectionStart)}`;
          menu.hidden = true;
          renderChips();
          question.focus();
        });
        return option;
      }),
    );
    menu.hidden = !found.length;
  });
  return {
    selected: () => [...chosen.values()].map(({ type, id, full_text }) => ({ type, id, full_text })),
  };
}

if (copilot) startCopilot();
