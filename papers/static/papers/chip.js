// A paper's status chip (the markup of papers/_status_chip.html), shared by the library and the chat.

const STATUS_LABELS = { pending: "queued", indexing: "indexing…", ready: "ready", failed: "failed" };

// *warning* names the pages a ready paper could not read ("pages 3–4 have no text layer …"), and
// *ocrPages* the pages read by OCR ("ready (OCR)"); when undefined (a live status event, which does
// not carry them) the rendered ones stay.
export function renderChip(holder, status, error, warning, ocrPages) {
  holder.dataset.status = status;
  const chip = holder.querySelector(".chip");
  chip.className = `chip chip-${status}`;
  chip.textContent = STATUS_LABELS[status] || status;
  const reason = holder.querySelector(".chip-reason");
  reason.textContent = status === "failed" ? error || "" : "";
  reason.hidden = !(status === "failed" && error);
  const ocr = holder.querySelector(".chip-ocr");
  if (ocr) {
    if (ocrPages !== undefined) ocr.dataset.pages = String(ocrPages.length);
    ocr.hidden = !(status === "ready" && (ocrPages ? ocrPages.length : Number(ocr.dataset.pages || 0)));
  }
  const note = holder.querySelector(".chip-warning");
  if (!note) return;
  if (warning !== undefined) note.textContent = warning || "";
  note.hidden = !(status === "ready" && note.textContent);
}
