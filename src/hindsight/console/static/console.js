// The console's one script: "select all" boxes in the review queue. Everything else
// works without it (forms and links); the Content Security Policy allows only this file.
"use strict";
document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.dataset.selectAll) return;
  const form = box.closest("form");
  if (!form) return;
  for (const other of form.querySelectorAll(`input[type=checkbox][name="${box.dataset.selectAll}"]`)) {
    other.checked = box.checked;
  }
});
