// Library status chips: poll the API for papers still queued or indexing until they settle.

import { renderChip } from "./chip.js";

const SETTLED = new Set(["ready", "failed"]);
const POLL_MS = 3000;

function render(
  holder,
  { index_status: status, index_error: error, extraction_warning: warning, ocr_pages: ocrPages, title, authors, year },
) {
  // Indexing reads the title, authors and year from the PDF: show them once it settles. A work's
  // other versions and supplements are listed inside its card, each with its own title.
  const card = SETTLED.has(status) ? holder.closest(".work-file, .paper-card") : null;
  if (card) {
    const link = card.querySelector(".card-title a, .work-file-title");
    if (link && title) link.textContent = title;
    const meta = card.querySelector(".meta");
    if (meta) meta.textContent = [authors || "Unknown authors", year].filter(Boolean).join(" · ");
  }
  renderChip(holder, status, error, warning, ocrPages);
}

async function poll() {
  const pending = [...document.querySelectorAll(".paper-status")].filter((h) => !SETTLED.has(h.dataset.status));
  if (!pending.length) return;
  await Promise.all(
    pending.map(async (holder) => {
      try {
        const response = await fetch(`/api/papers/${Number(holder.dataset.paperId)}/`, {
          headers: { Accept: "application/json" },
          credentials: "same-origin",
        });
        if (response.ok) render(holder, await response.json());
      } catch {
        // Offline for a moment: the next poll tries again.
      }
    }),
  );
  setTimeout(poll, POLL_MS);
}

setTimeout(poll, POLL_MS);
