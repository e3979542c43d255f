import type { Metadata } from "next";
import { AuthPage } from "../sign-in/auth-page";

export const metadata: Metadata = { title: "Create account" };

type Props = { searchParams: Promise<{ next?: string }> };

export default async function SignUpPage({ searchParams }: Props) {
  return <AuthPage mode="sign-up" next={(await searchParams).next} />;
}
