// Drop PDFs to upload them: the page becomes a drop target for the first form marked
// `data-drop-zone` (a multi-file upload form, which works without this script). Dropped PDFs go
// into the form's file input and the form is submitted, as if chosen and sent by hand.

const form = document.querySelector("form[data-drop-zone]");
const input = form?.querySelector('input[type="file"]');

function carriesFiles(event) {
  return [...(event.dataTransfer?.types || [])].includes("Files");
}

if (form && input && !input.disabled) {
  const hint = form.querySelector(".drop-hint");
  if (hint) hint.hidden = false;
  let depth = 0; // dragenter/dragleave fire for every child element crossed

  const leave = () => {
    depth = 0;
    form.classList.remove("drop-active");
  };
  document.addEventListener("dragenter", (event) => {
    if (!carriesFiles(event)) return;
    depth += 1;
    form.classList.add("drop-active");
  });
  document.addEventListener("dragleave", (event) => {
    if (!carriesFiles(event)) return;
    depth = Math.max(0, depth - 1);
    if (!depth) leave();
  });
  document.addEventListener("dragover", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault(); // without it the browser opens the dropped file instead
    event.dataTransfer.dropEffect = "copy";
  });
  document.addEventListener("drop", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    leave();
    // Every dropped file is sent: the server checks each and names any it refuses (not a PDF, ...).
    const { files } = event.dataTransfer;
    if (!files.length) return;
    input.files = files;
    if (hint) hint.textContent = `Uploading ${files.length} file${files.length === 1 ? "" : "s"}…`;
    form.requestSubmit();
  });
}
