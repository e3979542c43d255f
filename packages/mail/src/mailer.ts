import nodemailer from "nodemailer";

/** One plain-text message (every mail Prim sends is text: links work in every client). */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/**
 * Mail over SMTP (`SMTP_URL`, e.g. `smtps://user:pass@smtp.example.com:465` or
 * `smtp://127.0.0.1:2525`), from `from` (`Name <address>`). nodemailer does the protocol.
 */
export function createMailer(options: { url: string; from: string }): Mailer {
  const transport = nodemailer.createTransport(options.url);
  return {
    async send(mail) {
      await transport.sendMail({ from: options.from, to: mail.to, subject: mail.subject, text: mail.text });
    },
    close: () => transport.close(),
  };
}
