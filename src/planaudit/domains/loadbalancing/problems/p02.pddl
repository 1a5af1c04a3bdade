;; Two regions; one bucket may only be served from the US.
(define (problem loadbalancing-p02)
  (:domain loadbalancing)
  (:objects
    eu us - region
    web - service
    s1 s2 - server
    b1 b2 - bucket)
  (:init
    (in-region s1 eu) (supports s1 web)
    (in-region s2 us) (supports s2 web)
    (allowed b1 us) (needs b1 web)
    (allowed b2 eu) (allowed b2 us) (needs b2 web)
    (powered s1) (running web s1)
    (= (capacity s1) 2) (= (load s1) 0) (= (services s1) 1)
    (= (capacity s2) 2) (= (load s2) 0) (= (services s2) 0)
    (= (users web s1) 0)
    (= (users web s2) 0)
    (= (total-cost) 0))
  (:goal (and
    (served b1)
    (served b2)))
  (:metric minimize (total-cost)))
