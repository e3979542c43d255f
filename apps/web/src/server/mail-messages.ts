import type { Mail } from "@prim/mail";

/** The dashboard's messages (plain text: links work in every mail client). */
const footer = "\n\n— Prim";

/** The link to the page that confirms a new account's address with its password (and signs it in). */
export function verificationMail(to: string, url: string): Mail {
  return {
    to,
    subject: "Confirm your email address for Prim",
    text: `Open this link and enter the password you chose to confirm ${to} and finish creating your Prim account:\n\n${url}\n\nThe link works for 24 hours. If you did not sign up, someone else used your address: ignore this mail (without it the account is unusable), or open the link and reset the account's password to make it yours.${footer}`,
  };
}

/** A sign-up with an address that already has an account (the page answers as for a new one). */
export function existingAccountMail(to: string, dashboardUrl: string): Mail {
  return {
    to,
    subject: "Someone tried to sign up to Prim with your address",
    text: `Someone (perhaps you) tried to create a Prim account with ${to}, which already has one.\n\nIf it was you, sign in:\n${dashboardUrl}/sign-in\n\nor, if you forgot your password, reset it:\n${dashboardUrl}/forgot-password\n\nIf it was not you, ignore this mail: your account is unchanged.${footer}`,
  };
}

/** A password reset link (asked for on /forgot-password). */
export function resetMail(to: string, url: string): Mail {
  return {
    to,
    subject: "Reset your Prim password",
    text: `Open this link to choose a new password for ${to}:\n\n${url}\n\nThe link works for one hour, once; your other sessions are signed out. If you did not ask for this, ignore this mail: your password is unchanged.${footer}`,
  };
}

/** An invitation to a workspace (the inviter also sees the link and may send it another way). */
export function invitationMail(input: {
  to: string;
  workspace: string;
  role: string;
  inviter: string;
  link: string;
}): Mail {
  return {
    to: input.to,
    subject: `${input.inviter} invited you to ${input.workspace} on Prim`,
    text: `${input.inviter} invited you to join the workspace ${input.workspace} on Prim as ${input.role}.\n\nAccept the invitation here (sign in, or create an account, with ${input.to}):\n\n${input.link}\n\nThe link works for 7 days, once.${footer}`,
  };
}
