// An enhancement only: the phase-1 draft is kept on the server while typing, so a reload
// keeps it. A file of the server's (its pages allow no inline script); the form names the
// address the draft goes to (data-draft). What was typed before this file ran (it loads
// after the page) is saved too: the text is compared with what the server sent.
(function () {
  var form = document.getElementById("phase1");
  if (!form) return;
  var box = document.getElementById("text"), note = document.getElementById("saved"),
      last = box.defaultValue, timer;
  function later() {
    clearTimeout(timer);
    timer = setTimeout(function () {
      if (box.value === last) return;
      var body = new URLSearchParams({text: box.value});
      fetch(form.dataset.draft, {method: "POST", body: body}).then(function (r) {
        if (r.ok) { last = body.get("text"); note.textContent = "draft saved"; }
      });
    }, 800);
  }
  box.addEventListener("input", later);
  if (box.value !== last) later();
})();
