/* global document */
document.querySelectorAll('.cookie-banner button').forEach((button) => button.addEventListener('click', () => button.closest('.cookie-banner').remove()));
