// A paper's status chip (the markup of papers/_status_chip.html), shared by the library and the chat.

const STATUS_LABELS = { pending: "queued", indexing: "indexing…", ready: "ready", failed: "failed" };

export function renderChip(holder, status, error) {
  holder.dataset.status = status;
  const chip = holder.querySelector(".chip");
  chip.className = `chip chip-${status}`;
  chip.textContent = STATUS_LABELS[status] || status;
  const reason = holder.querySelector(".chip-reason");
  reason.textContent = status === "failed" ? error || "" : "";
  reason.hidden = !(status === "failed" && error);
}
