/**
 * The bridge's own small buttons ("Ask Claude", "Run again"): a plain <button> (keyboard-
 * reachable), its text set as text, themed only with JupyterLab's CSS variables (light and
 * dark), loading nothing. No JupyterLab import: unit-tested in a small DOM.
 */

export function bridgeButton(
  doc: Document,
  className: string,
  label: string,
  title: string,
  onClick: () => void
): HTMLButtonElement {
  const button = doc.createElement('button');
  button.type = 'button';
  button.className = className;
  button.textContent = label;
  button.title = title;
  const style = button.style;
  style.display = 'block';
  style.margin = '6px 0 2px';
  style.padding = '2px 10px';
  style.font = 'var(--jp-ui-font-size1) var(--jp-ui-font-family)';
  style.color = 'var(--jp-ui-font-color1)';
  style.background = 'var(--jp-layout-color2)';
  style.border = 'var(--jp-border-width, 1px) solid var(--jp-border-color1)';
  style.borderRadius = 'var(--jp-border-radius, 2px)';
  style.cursor = 'pointer';
  button.addEventListener('click', onClick);
  return button;
}
