export { type CapturedMail, type MailCapture, type MailCaptureOptions, startMailCapture } from "./capture.js";
export { createMailer, type Mail, type Mailer } from "./mailer.js";
export { decodeHeader, readMessage } from "./message.js";
