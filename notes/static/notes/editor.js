// The note editor: Quill 2.0.3 (vendor/quill-2.0.3, BSD-3-Clause) over the note's HTML. Without
// JavaScript the form posts the textarea's HTML instead; the server sanitises both alike.

const editor = document.getElementById("note-editor");
const source = document.getElementById("note-content");
const form = document.getElementById("note-form");

if (editor && source && form && window.Quill) {
  editor.hidden = false;
  source.hidden = true;
  const quill = new window.Quill(editor, {
    theme: "snow",
    modules: {
      toolbar: [
        [{ header: [1, 2, 3, false] }],
        ["bold", "italic", "underline", "strike"],
        [{ list: "ordered" }, { list: "bullet" }],
        ["blockquote", "code-block", "link"],
        ["clean"],
      ],
    },
  });
  form.addEventListener("submit", () => {
    // Quill 2.0.3's getSemanticHTML writes every space as &nbsp;; notes keep plain spaces.
    source.value = quill.getSemanticHTML().replaceAll("&nbsp;", " ");
  });
}
