import { AuthPage } from "./auth-page";

type Props = { searchParams: Promise<{ next?: string }> };

export default async function SignInPage({ searchParams }: Props) {
  return <AuthPage mode="sign-in" next={(await searchParams).next} />;
}
