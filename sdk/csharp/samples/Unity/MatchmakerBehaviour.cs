// A Unity component that queues the player, accepts the ready check and logs
// the game server to connect to. Drop it on a GameObject, set the fields in the
// Inspector (the token comes from your login service), press Play.
//
// The session raises events on a background thread; Unity's API may only be
// used on the main thread, so events go through a queue that Update() drains.
using System.Collections.Concurrent;
using System.Threading.Tasks;
using Matchmaker;
using UnityEngine;

public class MatchmakerBehaviour : MonoBehaviour
{
    [SerializeField] string baseUrl = "http://127.0.0.1:8080";
    [SerializeField] string playerToken = "alice";
    [SerializeField] string mode = "1v1";
    [SerializeField] string region = "eu";
    [SerializeField] bool autoAccept = true;

    MatchmakerClient client;
    Session session;
    Ticket ticket;
    readonly ConcurrentQueue<SessionEvent> events = new ConcurrentQueue<SessionEvent>();

    async void Start()
    {
        client = new MatchmakerClient(new ClientOptions
        {
            BaseUrl = baseUrl,
            // Called again after a 401: fetch a fresh token from the login service here.
            Token = refresh => Task.FromResult(playerToken),
        });
        session = client.CreateSession();
        session.OnEvent += events.Enqueue;
        try
        {
            await session.ConnectAsync();
            ticket = await client.CreateTicketAsync(new TicketRequest(mode, session.PlayerId).InRegion(region));
            Debug.Log("queued " + ticket.Id + (ticket.EstimatedWaitMs.HasValue ? ", about " + ticket.EstimatedWaitMs.Value / 1000 + " s" : ""));
        }
        catch (MatchmakerException e)
        {
            Debug.LogError("matchmaker: " + e.Code + ": " + e.Message);
        }
    }

    void Update()
    {
        SessionEvent e;
        while (events.TryDequeue(out e)) Handle(e);
    }

    async void Handle(SessionEvent e)
    {
        switch (e.Type)
        {
            case EventTypes.ReadyCheck:
                Debug.Log("match found: " + e.MatchId);
                if (autoAccept) await session.AnswerAsync(e.MatchId, true);
                break;
            case EventTypes.Assigned:
                Debug.Log("connect to " + e.Server.Address);
                break;
            case EventTypes.Completed:
                Debug.Log("match over");
                break;
            case EventTypes.RatingUpdated:
                Debug.Log("new rating " + e.New.GetDouble("rating"));
                break;
            case EventTypes.TicketCancelled:
            case EventTypes.TicketTimedOut:
            case EventTypes.MatchFailed:
                Debug.LogWarning(e.Type + ": " + e.Reason);
                break;
            case EventTypes.SessionDisconnected:
                Debug.LogWarning("disconnected; retrying in " + e.RetryInMs + " ms");
                break;
        }
    }

    async void OnDestroy()
    {
        session?.Close();
        if (ticket != null && client != null)
        {
            try { await client.CancelTicketAsync(ticket.Id); }
            catch (MatchmakerException) { /* already matched or over */ }
        }
        client?.Dispose();
    }
}
