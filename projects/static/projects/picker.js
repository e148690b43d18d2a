// The add-papers picker: never lets more boxes be ticked than the project has room for.
// The server refuses an overshoot anyway (all or nothing); this keeps the form honest.

const picker = document.getElementById("paper-picker");

if (picker) {
  const room = Number(picker.dataset.room);
  const boxes = [...picker.querySelectorAll('input[type="checkbox"][name="papers"]')];
  const roomLine = document.getElementById("picker-room");
  const submit = picker.querySelector('button[type="submit"]');

  const update = () => {
    const ticked = boxes.filter((box) => box.checked).length;
    const left = room - ticked;
    for (const box of boxes) box.disabled = !box.checked && left <= 0;
    submit.disabled = ticked === 0;
    roomLine.textContent =
      left > 0 ? `Room for ${left} more paper${left === 1 ? "" : "s"}.` : "The project will be full.";
  };
  picker.addEventListener("change", update);
  update();
}
