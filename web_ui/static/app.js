// The dashboard's only script (CSP: script-src 'self'). Forms marked data-confirm ask before submitting.
"use strict";
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
