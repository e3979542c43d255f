import type { Metadata } from "next";
import { AuthPage } from "./auth-page";

export const metadata: Metadata = { title: "Sign in" };

type Props = { searchParams: Promise<{ next?: string }> };

export default async function SignInPage({ searchParams }: Props) {
  return <AuthPage mode="sign-in" next={(await searchParams).next} />;
}
