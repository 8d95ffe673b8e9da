import Link from "next/link";

export default function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>
        No such run. <Link href="/">Back to recent runs</Link>
      </p>
    </>
  );
}
